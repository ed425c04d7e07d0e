"""The expert agents against Python's own integers and strings, on random, hard and long-tail instances.

The four arithmetic tasks have the tests that know their operands (digits, two numbers, the hard
kinds); every task, the ten of issue 17 too, is checked against `reference_answer`, a second Python
implementation written apart from the tasks' own `answer`."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome, run_agent
from dfst.tasks import TASKS, Instance, Task
from dfst.tasks.arith import exact_answer
from task_samples import hard_cases

ARITHMETIC = ["add2", "add10", "mult2", "mult10"]
ADD_TASKS = [name for name in ARITHMETIC if TASKS[name].operation == "add"]
MULT_TASKS = [name for name in ARITHMETIC if TASKS[name].operation == "mult"]


def int_answer(task: Task, a: str, b: str) -> str:
    """The answer from Python ints, independent of dfst.tasks.arith."""
    x, y = int(a, task.base), int(b, task.base)
    value = x + y if task.operation == "add" else x * y
    return format(value, {2: "b", 10: "d"}[task.base])


def reference_answer(task: Task, a: str, b: str) -> str:
    """Every task's answer, from Python, written apart from the tasks' own `answer` functions."""
    fmt = {2: "b", 10: "d"}[task.base]
    if task.operation in ("add", "mult"):
        return int_answer(task, a, b)
    if task.operation == "sub":
        return format(int(a, task.base) - int(b, task.base), fmt)
    if task.operation == "compare":
        x, y = int(a, task.base), int(b, task.base)
        return "<" if x < y else "=" if x == y else ">"
    if task.operation == "div":
        q, r = divmod(int(a), int(b))
        return f"{q} {r}"
    if task.operation == "parity":
        return str(sum(map(int, a)) % 2)
    if task.operation == "sort":
        return "".join(sorted(a))
    if task.operation == "reverse":
        return "".join(reversed(a))
    assert task.operation == "dyck"
    while "()" in a:
        a = a.replace("()", "")
    return "y" if a == "" else "n"


def solve(task: Task, instance: Instance) -> str | None:
    """Run the expert with the compiled engine; it must halt within the task's step bound."""
    layout = task.layout(instance)
    run = run_table(task.agent, layout, task.max_steps(instance))
    assert run.outcome == Outcome.HALTED, (instance, run.outcome)
    return task.read_answer(run.cells, layout.answer)


@st.composite
def operand(draw, base: int, max_len: int = 60) -> str:
    """A digit string of 1..max_len digits; leading zeros allowed in about half of the draws."""
    digits = "0123456789"[:base]
    length = draw(st.integers(1, max_len))
    text = "".join(draw(st.lists(st.sampled_from(digits), min_size=length, max_size=length)))
    if draw(st.booleans()):
        text = draw(st.sampled_from(digits[1:])) + text[1:]
    return text


@st.composite
def instances(draw, task: Task) -> Instance:
    return Instance(draw(operand(task.base)), draw(operand(task.base)))


@pytest.mark.parametrize("name", ARITHMETIC)
def test_expert_matches_python_integers(name):
    task = TASKS[name]

    @settings(max_examples=300, deadline=None)
    @given(instances(task))
    def check(instance):
        expected = task.expected(instance)
        assert expected == int_answer(task, instance.a, instance.b)
        assert solve(task, instance) == expected

    check()


@pytest.mark.parametrize("name", TASKS)
def test_every_hard_instance_is_solved(name):
    task = TASKS[name]
    for n in range(1, 31):
        for instance in task.hard_instances(n):
            assert solve(task, instance) == reference_answer(task, instance.a, instance.b), (n, instance)


@pytest.mark.parametrize("name", TASKS)
def test_reference_simulator_agrees(name):
    """The two simulators on the hard sets at 1..6 digits (a sample of each where it is large: every
    hard instance's answer is checked with the table engine in `test_every_hard_instance_is_solved`)."""
    task = TASKS[name]
    cases = hard_cases(task, range(1, 7))
    cases += task.random_instances(5, 3, seed=1) + task.random_instances(7, 2, seed=2, m=3)
    for instance in cases:
        layout = task.layout(instance)
        result = run_agent(task.agent, layout, task.max_steps(instance))
        assert result.outcome == Outcome.HALTED, instance
        answer = task.read_grid_answer(result.grid, layout.answer)
        assert answer == solve(task, instance) == reference_answer(task, instance.a, instance.b), instance


@pytest.mark.parametrize("name, max_k, max_d", [
    ("add2", 4, 12), ("add10", 12, 20), ("mult2", 4, 32), ("mult10", 12, 108),
])
def test_expert_size(name, max_k, max_d):
    agent = TASKS[name].agent
    assert agent.k <= max_k and agent.d <= max_d, (agent.k, agent.d)
    assert agent.k == TASKS[name].base + 1  # the digits and the blank, nothing else


def visited_rules(task: Task, instance: Instance) -> set[tuple[str, str]]:
    """(state, symbol) pairs the expert reads on `instance`, replaying the reference semantics."""
    run = run_agent(task.agent, task.layout(instance), task.max_steps(instance), record=True)
    assert run.outcome == Outcome.HALTED, (instance, run.outcome, run.state)
    return set(run.visited)


def coverage_instances(task: Task) -> list[Instance]:
    """Hard instances of 1..4 digits plus seeded random ones of 1..8 digits, leading zeros allowed
    (the task's own random instances where it has a generator: a >= b, one operand, ...)."""
    rng, digits = random.Random(0), "0123456789"[: task.base]

    def draw() -> str:
        return "".join(rng.choice(digits) for _ in range(rng.randint(1, 8)))

    hard = [i for n in range(1, 5) for i in task.hard_instances(n)]
    if task.generate is not None:
        return hard + [i for n in range(1, 9) for i in task.random_instances(n, 50, seed=n, m=9 - n)]
    return hard + [Instance(draw(), draw()) for _ in range(400)]


@pytest.mark.parametrize("name", TASKS)
def test_every_rule_is_used(name):
    """No dead rules: every rule of the expert is read on some instance (and no rule is missing)."""
    task = TASKS[name]
    seen = set()
    for instance in coverage_instances(task):
        seen |= visited_rules(task, instance)
        if len(seen) == len(task.agent.rules):
            break  # every rule read: the instances left cannot change the verdict
    unused = sorted(set(task.agent.rules) - seen)
    assert not unused, f"{len(unused)} rules of {name} are never used: {unused}"


def _digits(task: Task) -> tuple[str, str, str]:
    d = "0123456789"[: task.base]
    return d[0], d[1], d[-1]


def required_kinds(task: Task, n: int) -> dict[str, tuple[str, str]]:
    """The (a, b) pairs, by content, that the hard set at n digits must contain (n >= 3)."""
    zero, one, top = _digits(task)
    two = "0123456789"[min(2, task.base - 1)]
    power, symmetric = one + zero * (n - 1), one + zero * (n - 2) + one
    alternating = (one + zero) * (n // 2) + one * (n % 2)
    kinds = {
        "all zero": (zero * n, zero * n), "all max": (top * n, top * n),
        "power": (power, power), "symmetric 10…01": (symmetric, symmetric),
        "alternating": (alternating, alternating), "0 op 0": (zero, zero),
        "N vs 1": (top * n, top), "1 vs N": (top, top * n),
        "leading zeros 0…02": (zero * (n - 1) + two, zero * (n - 1) + two),
    }
    if task.operation == "add":
        kinds |= {"carry chain": (top * n, one), "carry chain swapped": (one, top * n)}
    else:
        kinds |= {"0 × x": (zero, top * n), "x × 0": (_cycle(task, n), zero),
                  "1 × x": (one, _cycle(task, n)), "x × 1": (top * n, one)}
    return kinds


def _cycle(task: Task, n: int) -> str:
    return "".join("0123456789"[i % (task.base - 1) + 1] for i in range(n))


@pytest.mark.parametrize("n", [3, 4, 7, 12])
@pytest.mark.parametrize("name", ARITHMETIC)
def test_hard_set_contains_required_kinds(name, n):
    task = TASKS[name]
    pairs = {(i.a, i.b) for i in task.hard_instances(n)}
    missing = [kind for kind, pair in required_kinds(task, n).items() if pair not in pairs]
    assert not missing, missing
    assert any(a == b and len(set(a)) > 1 for a, b in pairs), "equal operands, not constant"
    assert all(max(len(a), len(b)) == n or (a, b) == ("0", "0") for a, b in pairs)


@pytest.mark.parametrize("name", ARITHMETIC)
def test_hard_set_at_one_digit(name):
    task = TASKS[name]
    zero, one, top = _digits(task)
    pairs = [(i.a, i.b) for i in task.hard_instances(1)]
    assert len(pairs) == len(set(pairs)), "duplicates"
    assert {(zero, zero), (top, top), (top, one), (one, one)} <= set(pairs)


@pytest.mark.parametrize("name", TASKS)
def test_hard_instances_are_valid_and_deterministic(name):
    task = TASKS[name]
    for n in (1, 2, 5, 9):
        first = task.hard_instances(n)
        assert first == task.hard_instances(n)
        for instance in first:
            assert task.check(instance.a, instance.b).a == instance.a
            assert instance.name and instance.name != "random"


@pytest.mark.parametrize("name", ARITHMETIC)
def test_random_instances(name):
    task = TASKS[name]
    first = task.random_instances(9, 20, seed=7, m=4)
    assert first == task.random_instances(9, 20, seed=7, m=4)
    assert first != task.random_instances(9, 20, seed=8, m=4)
    assert len(first) == 20
    for instance in first:
        assert (len(instance.a), len(instance.b)) == (9, 4)
        assert instance.a[0] != "0" and instance.b[0] != "0"
        assert task.check(instance.a, instance.b).b == instance.b
    square = task.random_instances(6, 5, seed=7)
    assert all(len(i.a) == len(i.b) == 6 for i in square)
    one_digit = task.random_instances(1, 50, seed=3)
    assert all(i.a != "0" and i.b != "0" for i in one_digit)
    assert len({i.a for i in one_digit}) == task.base - 1  # every non-zero digit is drawn


BAD_DIGITS = {2: "102", 10: "12a"}


@pytest.mark.parametrize("name", ARITHMETIC)
def test_check_rejects_bad_operands(name):
    task = TASKS[name]
    for bad, why in (("", "empty"), ("-5", "negative"), (BAD_DIGITS[task.base], "not a digit")):
        with pytest.raises(DfstError, match=f"first operand .*{why}"):
            task.check(bad, "1")
        with pytest.raises(DfstError, match=f"second operand .*{why}"):
            task.check("1", bad)
    assert task.check("0", "101") == Instance("0", "101", "user")


@pytest.mark.parametrize("name", ADD_TASKS)
def test_addition_never_moves_the_answer(name):
    """The sum is written over b: cells of b's row right of the units column stay blank."""
    task = TASKS[name]
    instance = Instance("1" * 5, "1")
    layout = task.layout(instance)
    run = run_table(task.agent, layout, task.max_steps(instance))
    row, col = layout.answer
    assert (run.cells[row, col + 1:] == task.blank).all()
    assert task.read_answer(run.cells, layout.answer) == int_answer(task, "11111", "1")


@pytest.mark.parametrize("name", MULT_TASKS)
def test_multiplication_by_single_digits(name):
    task = TASKS[name]
    for a in ("0", "1", "10", "0001", "1" * 9):
        for b in "0123456789"[: task.base]:
            assert solve(task, Instance(a, b)) == int_answer(task, a, b), (a, b)
            assert solve(task, Instance(b, a)) == int_answer(task, b, a), (b, a)


@pytest.mark.parametrize("operation,a,b,expected", [
    ("mult", "9" * 2500, "9" * 2500, "9" * 2499 + "8" + "0" * 2499 + "1"),  # (10^n - 1)^2
    ("add", "9" * 4299, "1", "1" + "0" * 4299),
    ("add", "9" * 5000, "9" * 5000, "1" + "9" * 4999 + "8"),
    ("mult", "1" + "0" * 3000, "7" * 1999, "7" * 1999 + "0" * 3000),
])
def test_exact_answers_beyond_pythons_int_string_limit(operation, a, b, expected):
    """Long decimal operands cross CPython's 4300-digit conversion limit and the decimal switch."""
    assert exact_answer(operation, a, b, 10) == expected
