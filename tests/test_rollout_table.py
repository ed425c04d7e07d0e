"""The numba table engine equals the pure-Python reference simulator, outcome by outcome."""

from __future__ import annotations

import numpy as np
import pytest

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome, run_agent
from dfst.tasks import TASKS
from task_samples import hard_cases

ALPHABET = ("0", "1", "_")
BLANK = 2

# Flip the bits of a word left to right; halt on the blank after it.
FLIP = [
    # state   read   next     write  move
    ("scan", "0", "scan", "1", "R"),
    ("scan", "1", "scan", "0", "R"),
    ("scan", "_", "halt", "_", "S"),
]


def literal_agent(table, states=("scan", "halt")) -> Transducer:
    return make_transducer(states, ALPHABET, [Rule(*row) for row in table], initial="scan",
                           final="halt", blank="_")


def word_layout(word: str, rows: int = 3) -> Layout:
    """`word` on the middle row with a blank margin all round; the head on its first symbol."""
    cells = np.full((rows, len(word) + 2), BLANK, dtype=np.uint8)
    cells[rows // 2, 1:-1] = [ALPHABET.index(ch) for ch in word]
    return Layout(cells, head=(rows // 2, 1), answer=(rows // 2, len(word)))


def assert_same_run(agent: Transducer, layout: Layout, max_steps: int) -> Outcome:
    """Both engines, recording: same outcome, steps, state, head, final grid and trace."""
    before = layout.cells.copy()
    fast = run_table(agent, layout, max_steps, record=True)
    slow = run_agent(agent, layout, max_steps, record=True)
    assert (fast.outcome, fast.steps) == (slow.outcome, slow.steps)
    assert agent.states[fast.state] == slow.state
    assert fast.head == slow.head
    np.testing.assert_array_equal(fast.cells, slow.grid.to_array(layout.cells.shape))
    np.testing.assert_array_equal(fast.trace, np.array(slow.trace, dtype=np.uint8).reshape(-1, 3))
    np.testing.assert_array_equal(layout.cells, before)  # the layout is not modified
    return fast.outcome


def task_cases(name: str):
    task = TASKS[name]
    cases = hard_cases(task, range(1, 6))  # sampled where the set is large (div10x1, mult10x1)
    return cases + task.random_instances(6, 4, seed=11) + task.random_instances(2, 3, seed=12, m=7)


@pytest.mark.parametrize("name", TASKS)
def test_table_engine_equals_reference_on_experts(name):
    task = TASKS[name]
    for instance in task_cases(name):
        outcome = assert_same_run(task.agent, task.layout(instance), task.max_steps(instance))
        assert outcome == Outcome.HALTED, instance


@pytest.mark.parametrize("name", TASKS)
def test_step_limit(name):
    task = TASKS[name]
    for instance in task.hard_instances(4)[:6] + task.random_instances(3, 2, seed=5):
        layout = task.layout(instance)
        needed = run_table(task.agent, layout, task.max_steps(instance)).steps
        assert needed > 1
        assert assert_same_run(task.agent, layout, needed) == Outcome.HALTED
        for limit in (needed - 1, needed // 2, 1):
            assert assert_same_run(task.agent, layout, limit) == Outcome.STEP_LIMIT
            assert run_table(task.agent, layout, limit).steps == limit
        assert run_table(task.agent, layout, 0).steps == 0


def test_known_answer_of_literal_agent():
    layout = word_layout("0110")
    run = run_table(literal_agent(FLIP), layout, 100, record=True)
    assert (run.outcome, run.steps, run.head, run.state) == (Outcome.HALTED, 5, (1, 5), 1)
    assert run.cells[1].tolist() == [BLANK, 1, 0, 0, 1, BLANK]
    assert run.trace.tolist() == [[0, 1, 3], [1, 0, 3], [1, 0, 3], [0, 1, 3], [BLANK, BLANK, 4]]
    assert run_table(literal_agent(FLIP), layout, 100).trace.shape == (0, 3)
    assert assert_same_run(literal_agent(FLIP), layout, 100) == Outcome.HALTED


def test_no_rule():
    agent = literal_agent([row for row in FLIP if row[1] != "1"])  # no rule for (scan, 1)
    layout = word_layout("0010")
    run = run_table(agent, layout, 100)
    assert (run.outcome, run.steps, run.head, agent.states[run.state]) == (Outcome.NO_RULE, 2, (1, 3), "scan")
    assert assert_same_run(agent, layout, 100) == Outcome.NO_RULE


@pytest.mark.parametrize("move, head", [("R", (2, 5)), ("L", (2, -1)), ("U", (-1, 1)), ("D", (5, 1))])
def test_off_layout(move, head):
    """An agent that never halts walks out of the array: the table engine stops there."""
    agent = literal_agent([("scan", s, "scan", s, move) for s in ALPHABET])
    layout = word_layout("011", rows=5)
    run = run_table(agent, layout, 1000)
    steps = abs(head[0] - 2) + abs(head[1] - 1)
    assert (run.outcome, run.steps, run.head) == (Outcome.OFF_LAYOUT, steps, head)
    # The unbounded reference simulator is at the same place after the same number of steps.
    slow = run_agent(agent, layout, steps)
    assert (slow.outcome, slow.head) == (Outcome.STEP_LIMIT, head)
    np.testing.assert_array_equal(run.cells, slow.grid.to_array(layout.cells.shape))
