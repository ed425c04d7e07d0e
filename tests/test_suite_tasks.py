"""The frozen suite of new algorithms (benchmarks/suite/tasks.py): registered through the tasks file
(each expert checked against its answer function there), answers as their definitions give them,
experts that agree with them on random instances, and hard sets that fire every rule that can fire."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from dfst.data.coverage import coverage
from dfst.tasks import TASKS
from dfst.tasks.solve import solve
from dfst.tasks.user import load_tasks_file

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "suite" / "tasks.py"
NEVER_FIRE = {"sub3": 7}  # b's digits past a's, a borrow past the end: impossible when a >= b

pytestmark = pytest.mark.usefixtures("task_registry")


@pytest.fixture
def suite():
    builtin = set(TASKS)
    names = load_tasks_file(SUITE)
    assert not builtin & set(names)  # new algorithms, none of dfst's own
    return [TASKS[name] for name in names]


def test_the_suite_has_twelve_or_more_tasks_of_3_to_40_states_and_varied_kinds(suite):
    assert len(suite) >= 12
    assert all(3 <= task.agent.d <= 40 for task in suite)
    assert {task.base for task in suite} >= {2, 3, 10} and max(task.base for task in suite) > 10
    assert {task.operands for task in suite} == {1, 2}
    assert {task.readout for task in suite} >= {"number", "string", "symbol"}


KNOWN = [  # worked by hand from each definition
    ("add3", "22", "1", "100"), ("add12", "b", "1", "10"), ("sub3", "100", "1", "22"),
    ("xor2", "1100", "1010", "110"), ("and2", "1100", "1010", "1000"), ("maxdigit10", "19", "81", "89"),
    ("eq3", "012", "12", "y"), ("eq3", "12", "21", "n"), ("gray2", "0111", "", "0100"),
    ("negate2", "0110", "", "1010"), ("negate2", "000", "", "000"), ("contains101", "0010100", "", "y"),
    ("contains101", "1001", "", "n"), ("triple10", "67", "", "201"), ("mod7_10", "100", "", "2"),
    ("palindrome2", "1001", "", "y"), ("palindrome2", "10", "", "n")]


def test_answers_are_the_definitions_and_the_experts_give_them(suite):
    for name, a, b, answer in KNOWN:
        task = TASKS[name]
        assert task.answer(a, b, task.base) == answer, name
        assert solve(task, task.check(a, b)).result == answer, name


def test_every_expert_agrees_with_its_answer_on_random_instances(suite):
    rng = random.Random(0)
    for task in suite:
        draws = np.random.default_rng(rng.randrange(2**32))
        for _ in range(40):
            n = rng.randint(1, 40)
            drawn = task.random_instance(draws, n, rng.randint(1, n))  # the task's generate, or numbers
            instance = task.check(drawn.a, drawn.b)
            expected = task.answer(instance.a, instance.b, task.base)
            assert solve(task, instance).result == expected, (task.name, instance)


def test_hard_sets_fire_every_rule_that_can_fire(suite):
    n = 4  # the shortest hard sets that can: contains101 fires its last rules from 4 symbols on
    for task in suite:
        instances = [i for m in range(1, n + 1) for i in task.hard(m, task.base)]
        assert len(coverage(task, instances)[1]) == NEVER_FIRE.get(task.name, 0), task.name
