"""div10x1's expert, which divides by repeated subtraction on the grid (tasks/division.py): its rule
table less exactly what no grid reads, its step bound, its layout and a hard set that reads every rule."""

from __future__ import annotations

import pytest

from dfst.data.coverage import rules_used
from dfst.tasks import TASKS
from dfst.tasks.division import NEVER_READ, STEPS_PER_COLUMN, divider_rules
from dfst.tasks.solve import solve

TASK = TASKS["div10x1"]
DIVISORS = "123456789"


def _used(instances) -> set:
    return set().union(*(rules_used(TASK.agent, TASK.layout(i), TASK.max_steps(i)) for i in instances))


def _every_instance(n: int) -> list:
    return [TASK.check(str(v).zfill(n), d) for v in range(10 ** n) for d in DIVISORS]


def test_the_expert_drops_exactly_the_rules_no_grid_reads():
    """Every instance of up to 2 digits reads every rule the expert keeps; with the 3-digit hard
    set, none of the dropped ones."""
    seen = _used([i for n in (1, 2) for i in _every_instance(n)] + TASK.hard_instances(3))
    assert seen == set(TASK.agent.rules)
    assert {(r.state, r.read) for r in divider_rules()} - seen == NEVER_READ


def _column_steps(r: int, x: int, d: str) -> int:
    """Steps of the second column of `r x` ÷ d: the first (r < d) leaves remainder r."""
    return solve(TASK, TASK.check(f"{r}{x}", d)).run.steps - solve(TASK, TASK.check(f"{r}", d)).run.steps


def test_the_step_bound_is_the_costliest_column():
    costs = {(r, x, d): _column_steps(r, x, d) for d in DIVISORS for r in range(int(d)) for x in range(10)}
    assert max(costs.values()) == STEPS_PER_COLUMN == costs[(8, 9, "9")]  # 89 ÷ 9
    slowest = TASK.check("8" + "9" * 6, "9")  # the costliest column six times
    steps = solve(TASK, slowest).run.steps
    assert TASK.max_steps(slowest) - STEPS_PER_COLUMN < steps <= TASK.max_steps(slowest)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_the_hard_set_reads_every_rule(n):
    seen = set()
    for instance in TASK.hard_instances(n):
        seen |= _used([instance])
        if seen == set(TASK.agent.rules):
            break  # every rule read: the instances left cannot change the verdict
    assert seen == set(TASK.agent.rules)


def test_the_hard_set_leaves_every_remainder_under_every_last_quotient_digit():
    answers = [solve(TASK, i).result.split() for i in TASK.hard_instances(4)]
    pairs = {quotient[-1] + remainder for quotient, remainder in answers}
    reachable = {str(v // d)[-1] + str(v % d) for d in range(1, 10) for v in range(90) if v // 10 < d}
    assert pairs >= reachable


def test_the_layout_keeps_the_counts_and_the_divisor_on_the_grid():
    """100 ÷ 7: quotient digits with the leading zero on row 2, the remainder two cells on; a's
    digits spent down to the last remainder, the divisor's units moved one column past a, Q empty."""
    solution = solve(TASK, TASK.check("100", "7"))
    cells = solution.run.cells
    text = ["".join("." if s == 10 else str(s) for s in row) for row in cells]
    assert solution.result == "14 2"
    assert text[1:5] == ["..002...", "..014.2.", "..0007..", "..000..."]
    assert solution.layout.answer == (2, 6)


def test_the_protocol_predicts_a_length_by_its_step_bound():
    """The time budget's prediction: division's columns cost the same at any length (linear), unlike
    multiplication's rounds (quadratic); a quadratic guess stopped div10x1's raw weights at 100 digits."""
    assert TASK.time_growth(1000, 100) == pytest.approx(10, rel=0.01)
    assert TASKS["mult10"].time_growth(1000, 100) == pytest.approx(100, rel=0.05)
    assert TASKS["add2"].time_growth(1000, 100) == pytest.approx(10, rel=0.05)
