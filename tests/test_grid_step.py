"""One move table and one Python grid step: `step_agent` drives the reference simulator, the env (its
world half, `act`) and the animation; the numba engine's move arrays are the same table."""

from __future__ import annotations

import numpy as np
import pytest

from dfst.automata import MOVE_DELTA, MOVE_DELTAS, MOVES
from dfst.cli.animate import _frames
from dfst.grid import rollout
from dfst.grid.grid import Grid
from dfst.grid.world import Outcome, act, run_agent, step_agent
from dfst.tasks import TASKS
from dfst.tasks.env import GridEnv


def test_one_move_table():
    assert tuple(MOVE_DELTA[m] for m in MOVES) == MOVE_DELTAS
    assert [(int(r), int(c)) for r, c in zip(rollout._DR, rollout._DC)] == list(MOVE_DELTAS)


@pytest.mark.parametrize("name", TASKS)
def test_step_on_sparse_and_dense_grids_agree(name):
    """The same steps on a Grid and on the layout's array: same PTO, head, state and cells."""
    task = TASKS[name]
    inst = task.random_instances(3, 1, seed=5)[0]
    layout, agent = task.layout(inst), task.agent
    dense, grid = layout.cells.copy(), Grid.from_array(layout.cells, task.blank)
    head, state = layout.head, agent.initial
    for _ in range(task.max_steps(inst)):
        a, b = step_agent(agent, dense, head, state), step_agent(agent, grid, head, state)
        assert a == b
        head, state = a.head, a.state
        if a.halted:
            break
    np.testing.assert_array_equal(dense, grid.to_array(dense.shape))
    assert task.read_answer(dense, layout.answer) == task.expected(inst)


def test_step_without_rule_leaves_the_grid():
    agent = TASKS["add2"].agent
    cells = np.array([[0]], dtype=np.uint8)
    assert step_agent(agent, cells, (0, 0), agent.final) is None
    assert cells[0, 0] == 0


def test_act_writes_then_moves():
    cells = np.zeros((3, 3), dtype=np.uint8)
    for move, (dr, dc) in enumerate(MOVE_DELTAS):
        assert act(cells, (1, 1), move + 1, move) == (1 + dr, 1 + dc)
        assert cells[1, 1] == move + 1


@pytest.mark.parametrize("name", TASKS)
def test_env_and_animation_follow_the_reference_run(name):
    task = TASKS[name]
    inst = task.random_instances(2, 1, seed=3)[0]
    layout, agent, limit = task.layout(inst), task.agent, task.max_steps(inst)
    ref = run_agent(agent, layout, limit, record=True)
    assert ref.outcome == Outcome.HALTED
    env = GridEnv(task)
    obs, _ = env.reset(options={"a": inst.a, "b": inst.b})
    for i, (read, write, move) in enumerate(ref.trace):
        assert obs == read
        obs, reward, terminated, _, _ = env.step((write, move))
        assert terminated == (i == len(ref.trace) - 1)
    assert reward == 1.0 and env.head == ref.head
    np.testing.assert_array_equal(env.cells, ref.grid.to_array(env.cells.shape))
    frames = list(_frames(agent, task, layout, limit))
    assert len(frames) == ref.steps + 1 and frames[-1].startswith(f"step {ref.steps}  halted")
    assert [f.split("state ")[1].split("\n")[0] for f in frames[:-1]] == [q for q, _ in ref.visited]
