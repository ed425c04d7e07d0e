"""The experts stay exact on long operands (slow: run with `pytest -m slow`)."""

from __future__ import annotations

import pytest

from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.tasks import TASKS, Task

pytestmark = pytest.mark.slow

LENGTHS = {"add2": (2000, 3), "add10": (2000, 3), "mult2": (300, 2), "mult10": (300, 2)}


def int_answer(task: Task, a: str, b: str) -> str:
    x, y = int(a, task.base), int(b, task.base)
    value = x + y if task.operation == "add" else x * y
    return format(value, {2: "b", 10: "d"}[task.base])


@pytest.mark.parametrize("name", TASKS)
def test_expert_exact_on_long_operands(name):
    task = TASKS[name]
    n, count = LENGTHS[name]
    cases = task.hard_instances(n) + task.random_instances(n, count, seed=2024)
    assert max(len(i.a) for i in cases) == n
    for instance in cases:
        layout = task.layout(instance)
        run = run_table(task.agent, layout, task.max_steps(instance))
        assert run.outcome == Outcome.HALTED, instance.name
        answer = task.read_answer(run.cells, layout.answer)
        assert answer == task.expected(instance) == int_answer(task, instance.a, instance.b), instance.name
