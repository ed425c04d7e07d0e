"""The Gymnasium-style env and the renderer: driving the env with the expert's actions reproduces
the expert's run, seeds reproduce instances, and pictures show the grid and the head."""

from __future__ import annotations

import pytest

from dfst.automata import MOVE_INDEX
from dfst.grid.render import BLANK_GLYPH, HEAD_STYLE, render_cells
from dfst.tasks import TASKS
from dfst.tasks.env import GridEnv


def drive_with_expert(env: GridEnv, obs: int) -> tuple[float, bool, int]:
    """Play the task's expert as a policy: its state is hidden from the env."""
    agent = env.task.agent
    state, reward, terminated, steps = agent.initial, 0.0, False, 0
    while not terminated:
        rule = agent.rule(state, agent.alphabet[obs])
        action = (agent.alphabet.index(rule.write), MOVE_INDEX[rule.move])
        obs, reward, terminated, truncated, _ = env.step(action)
        state, steps = rule.next, steps + 1
        assert not truncated
    return reward, terminated, steps


@pytest.mark.parametrize("name", list(TASKS))
def test_expert_policy_solves_random_instances(name):
    env = GridEnv(TASKS[name])
    for seed in range(5):
        obs, info = env.reset(seed=seed, options={"digits": 4, "digits_b": 3})
        shape = TASKS[name].example(4, 3)  # a >= b, one digit, one operand, ...: the task decides
        assert (len(info["instance"].a), len(info["instance"].b)) == (len(shape.a), len(shape.b))
        reward, terminated, _ = drive_with_expert(env, obs)
        assert terminated and reward == 1.0
        assert env.answer_text() == env.task.expected(info["instance"])


def test_given_operands_and_wrong_policy_gets_no_reward():
    env = GridEnv(TASKS["add10"])
    obs, _ = env.reset(options={"a": "999", "b": "1"})
    assert obs == 9  # the units digit of a
    _, reward, terminated, _, _ = env.step((5, MOVE_INDEX["S"]))  # write 5 and stop at once
    assert terminated and reward == 0.0


def test_same_seed_same_instance_and_truncation():
    env = GridEnv(TASKS["mult2"], max_steps=3)
    first = env.reset(seed=11, options={"digits": 6})[1]["instance"]
    assert env.reset(seed=11, options={"digits": 6})[1]["instance"] == first
    truncated = [env.step((0, MOVE_INDEX["L"]))[3] for _ in range(3)]
    assert truncated == [False, False, True]


def test_walking_off_the_layout_terminates():
    env = GridEnv(TASKS["add2"])
    env.reset(options={"a": "1", "b": "1"})
    for _ in range(10):
        _, reward, terminated, _, info = env.step((0, MOVE_INDEX["U"]))
        if terminated:
            break
    assert terminated and info["outcome"] == "off_layout" and reward == 0.0


def test_render_shows_digits_blanks_and_head():
    task = TASKS["mult10"]
    layout = task.layout(task.check("456", "12"))
    plain = render_cells(layout.cells, task.alphabet, task.blank, head=layout.head, color=False)
    assert "[1]" in plain and " 4  5  6 " in plain and BLANK_GLYPH in plain
    ansi = render_cells(layout.cells, task.alphabet, task.blank, head=layout.head)
    assert f"{HEAD_STYLE}1" in ansi


def test_render_crops_wide_grids_around_the_head():
    task = TASKS["add2"]
    layout = task.layout(task.check("1" * 500, "1"))
    picture = render_cells(layout.cells, task.alphabet, task.blank, head=layout.head, color=False,
                           max_width=40)
    assert "(columns" in picture and "[1]" in picture
    assert all(len(line) < 200 for line in picture.splitlines())
