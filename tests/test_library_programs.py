"""Every library program, compiled, gives Python's answer: on the discrete interpreter for every
input of small bases, and on the differentiable machine (one-hot parameters) batched over the same."""

from __future__ import annotations

import itertools
import random

import pytest

from dfst.baselines.library.isa import CIRCUIT_OPS
from dfst.baselines.library.programs import LIBRARY, Call, get_program
from dfst.baselines.library.run import run_call_discrete, run_calls_soft
from dfst.errors import DfstError

ARITHMETIC = [name for name in LIBRARY if name not in ("fib", "sort", "add2")]
PYTHON_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "min": min, "max": max}


def _python(name: str, a: int, b: int, n: int) -> int:
    return PYTHON_OPS[CIRCUIT_OPS.get(name, name)](a, b) % n


def _check(name: str, calls: list[Call], expected: list) -> None:
    """Discrete and soft answers both equal `expected` (computed here in Python)."""
    program = get_program(name)
    for call, want in zip(calls, expected):
        assert run_call_discrete(program, call).machine == want, (name, call)
    soft = run_calls_soft(program, calls)
    assert [s.machine for s in soft] == expected
    assert all(s.exact for s in soft)


@pytest.mark.parametrize("name", ARITHMETIC)
def test_arithmetic_is_exact_for_every_pair_of_base_8(name):
    calls = [Call((a, b), 8) for a in range(8) for b in range(8)]
    _check(name, calls, [_python(name, *c.args, 8) for c in calls])


@pytest.mark.parametrize("name", ["addc", "mulc", "subc", "mul"])
def test_arithmetic_base_128_sampled(name):
    rng = random.Random(0)
    calls = [Call((rng.randrange(128), rng.randrange(128)), 128) for _ in range(40)]
    _check(name, calls, [_python(name, *c.args, 128) for c in calls])


def _fibonacci(a: int, b: int, depth: int, n: int) -> int:
    """F(depth + 1) of F(0) = a, F(1) = b, by the closed sum of Fibonacci numbers (not a loop)."""
    fib = [0, 1]
    while len(fib) < depth + 2:
        fib.append(fib[-1] + fib[-2])
    return (fib[depth] * a + fib[depth + 1] * b) % n


@pytest.mark.parametrize("depth", range(7))
def test_fib_every_pair_of_base_16(depth):
    calls = [Call((a, b), 16, depth) for a in range(16) for b in range(16)]
    _check("fib", calls, [_fibonacci(a, b, depth, 16) for a, b in (c.args for c in calls)])


@pytest.mark.parametrize("base, depth", [(128, 5), pytest.param(256, 6, marks=pytest.mark.slow)])
def test_fib_base_128_and_256_sampled(base, depth):
    rng = random.Random(1)
    calls = [Call((rng.randrange(base), rng.randrange(base)), base, depth) for _ in range(8)]
    _check("fib", calls, [_fibonacci(a, b, depth, base) for a, b in (c.args for c in calls)])


@pytest.mark.parametrize("length", [1, 2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_sort_every_list_of_base_5(length):
    calls = [Call(values, 5) for values in itertools.product(range(5), repeat=length)]
    _check("sort", calls, [sorted(c.args) for c in calls])


def test_sort_every_list_of_length_4_on_the_interpreter():
    program = get_program("sort")
    for values in itertools.product(range(5), repeat=4):
        assert run_call_discrete(program, Call(values, 5)).machine == sorted(values)


def test_sort_base_64_sampled():
    rng = random.Random(2)
    calls = [Call(tuple(rng.randrange(64) for _ in range(6)), 64) for _ in range(12)]
    _check("sort", calls, [sorted(c.args) for c in calls])


def test_add2_every_pair_below_64_on_the_interpreter():
    program = get_program("add2")
    for a in range(64):
        for b in range(64):
            assert run_call_discrete(program, Call((a, b), 32)).machine == a + b


@pytest.mark.parametrize("width", [1, 4])
def test_add2_soft_every_pair_of_one_width(width):
    """A soft batch shares one width w (the sum's cells): operands whose longer one has w bits."""
    low, high = (0, 2) if width == 1 else (1 << (width - 1), 1 << width)
    pairs = [(a, b) for a in range(high) for b in range(high) if max(a, b) >= low][:64]
    calls = [Call(p, 32) for p in pairs]
    _check("add2", calls, [a + b for a, b in pairs])


@pytest.mark.parametrize("name, call, message", [
    ("add", Call((3, 16), 16), "values 0..15"),
    ("addc", Call((1, 2), 12), "power of two"),
    ("fib", Call((1, 2), 8, 3), "base >= 16"),
    ("sort", Call((1,) * 5, 5), "1..4 values"),
    ("add2", Call((255, 1), 16), "base >= 25"),
])
def test_bad_calls_are_one_line_errors(name, call, message):
    with pytest.raises(DfstError, match=message):
        run_call_discrete(get_program(name), call)
