"""Coverage: which expert rules a training set exercises, and covering training sets."""

from __future__ import annotations

import pytest

from dfst.data.coverage import cover_instances, coverage, rules_used
from dfst.tasks import TASKS, Instance


def test_rules_used_by_a_carry_chain():
    task = TASKS["add2"]
    inst = Instance("11", "1")
    used = rules_used(task.agent, task.layout(inst), task.max_steps(inst))
    # 1+1 carries, then 1 + blank + carry carries again, and the carry lands on a blank.
    assert {("add0", "1"), ("sum1", "1"), ("next1", "_"), ("add1", "1"), ("sum2", "_"),
            ("add1", "_"), ("carry", "_")} == used


@pytest.mark.parametrize("name,samples,digits", [("add2", 20, 3), ("add10", 225, 3), ("mult2", 60, 4)])
def test_cover_instances_exercise_every_rule(name, samples, digits):
    task = TASKS[name]
    chosen = cover_instances(task, samples, digits, seed=0)
    assert len(chosen) == samples
    assert all(len(i.a) <= digits and len(i.b) <= digits for i in chosen)
    used, missing = coverage(task, chosen)
    assert missing == set() and used == set(task.agent.rules)


def test_random_samples_can_miss_rules_and_coverage_says_which():
    task = TASKS["mult2"]
    sample = task.random_instances(3, 5, seed=1)
    used, missing = coverage(task, sample)
    assert missing and used | missing == set(task.agent.rules) and not used & missing
    assert ("skip_blank", "0") in missing  # only operands with leading zeros reach it


def test_cover_instances_is_deterministic():
    task = TASKS["add10"]
    assert cover_instances(task, 30, 3, seed=4) == cover_instances(task, 30, 3, seed=4)


def test_a_rule_the_first_pool_misses_is_found_in_a_bigger_one():
    """add10, seed 2: no pair of the first 2,000 candidates puts a 9 over a 0 after a carry."""
    from dfst.data.coverage import cover_instances
    from dfst.tasks import get_task

    task = get_task("add10")
    used, missing = coverage(task, cover_instances(task, 225, 3, seed=2))
    assert not missing and len(used) == len(task.agent.rules)


def _pairs_by_replay(task, inst):
    """Consecutive (state, symbol) pairs of the expert's run, by the compiled table run's trace."""
    from dfst.grid.rollout import run_table

    agent, state, keys = task.agent, task.agent.initial, []
    for x, _, _ in run_table(agent, task.layout(inst), task.max_steps(inst), record=True).trace:
        keys.append((state, agent.alphabet[x]))
        state = agent.rule(*keys[-1]).next
    return set(keys) | set(zip(keys, keys[1:]))


@pytest.mark.parametrize("name,a,b", [("add2", "1011", "111"), ("mult2", "0", "11"), ("mult10", "907", "35")])
def test_rule_pairs_used_are_the_rules_and_their_successions(name, a, b):
    from dfst.data.coverage import rule_pairs_used

    task, inst = TASKS[name], Instance(a, b)
    used = rule_pairs_used(task.agent, task.layout(inst), task.max_steps(inst))
    assert used == _pairs_by_replay(task, inst)


def test_a_pair_cover_shows_the_context_a_rule_cover_can_miss():
    """mult2: the round over the operand 0, where (shift_blank, 0) is followed by (shift0, blank)."""
    from dfst.data.coverage import rule_pairs_used

    task = TASKS["mult2"]
    context = (("shift_blank", "0"), ("shift0", "_"))
    chosen = cover_instances(task, 60, 4, seed=0, units=rule_pairs_used)
    assert any(context in _pairs_by_replay(task, i) for i in chosen)
    assert coverage(task, chosen)[1] == set()  # still every rule
    pool_pairs = set().union(*(_pairs_by_replay(task, i) for i in cover_instances(task, 60, 4, seed=0)))
    assert pool_pairs <= set().union(*(_pairs_by_replay(task, i) for i in chosen))


def test_the_coverage_query_runs_from_python_with_the_default_memory_bound():
    from dfst.data.coverage_query import CoverageQuery, coverage
    from dfst.errors import DfstError
    from dfst.tasks import get_task

    report = coverage(get_task("add2"), CoverageQuery(samples=5, max_digits=3))
    assert report["instances"] == 5 and report["covered"] <= report["rules"]
    with pytest.raises(DfstError, match="memory"):
        coverage(get_task("add2"), CoverageQuery(samples=5, max_digits=3, max_memory=1))
