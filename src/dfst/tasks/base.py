"""What a task is: a layout on the grid, an expert agent, a readout and instance generators.

No `from __future__ import annotations` here: the dataclass fields keep real types, so that a
subclass defined elsewhere (a baseline's task) documents its generated `__init__` without importing
these names (pdoc evaluates string annotations in the subclass's module).
"""

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import product

import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.grid.grid import Grid, Layout
from dfst.tasks.arith import canonical, check_operand, digit_symbols, digits_to_text, exact_answer
from dfst.tasks.readout import READOUTS

BLANK = "_"
# The most steps one run may take: the engines count steps in int64 (numba, numpy), and a bound
# past 2**62 leaves no room for the sums made of it; no run that long could finish anyway.
MAX_STEP_BOUND = 2 ** 62
OPERATORS = {"add": "+", "sub": "−", "mult": "×", "div": "÷", "compare": "vs"}  # for `Task.show`


@dataclass(frozen=True)
class Instance:
    """Two operands as digit strings (most significant first) and a name for reports; a task of one
    operand (parity2, sort2, ...) leaves `b` empty."""

    a: str
    b: str
    name: str = "random"

    @property
    def length(self) -> int:
        """The longer operand's symbols: the length the protocol files the instance under."""
        return max(len(self.a), len(self.b))


def alphabet_for(base: int) -> tuple[str, ...]:
    """Digits first, so that symbol index == digit value; then the blank."""
    return (*digit_symbols(base), BLANK)


@dataclass(frozen=True)
class Task:
    """A registered task. `draw` builds the layout, `build_agent` the expert, `hard` the hard set."""

    name: str
    operation: str  # a label; "add", "sub" and "mult" also name the exact answer (arith.exact_answer)
    base: int
    summary: str
    build_agent: Callable[[int], Transducer]
    draw: Callable[[str, str, int], Layout]
    hard: Callable[[int, int], list[Instance]]
    step_bound: Callable[[int, int, int], int]  # (len a, len b, base) -> steps the expert needs, at most
    # (a, b, base) -> the answer (any task but add, sub and mult); None: the operation's
    answer: Callable[[str, str, int], str] | None = None
    operands: int = 2  # 1: the instance is `a` alone (`b` is "")
    symbols: tuple[str, ...] | None = None  # the operands' symbols (values 0..base-1); None: the digits
    readout: str = "number"  # how the answer is read at the answer cell: a key of readout.READOUTS
    # (rng, n, m, base) -> operands of about n and m symbols that the task accepts; None: two random
    # numbers with a non-zero leading digit
    generate: Callable[[np.random.Generator, int, int, int], tuple[str, str]] | None = None
    # (a, b, base) -> why the operands are not an instance of the task (b > a in sub2), or None
    domain: Callable[[str, str, int], str | None] | None = None
    # the second operand's one length (1: a digit, in mult10x1 and div10x1); None: any length, and the
    # protocol draws random pairs of unequal lengths too (`dfst.protocol.instances.random_lengths`)
    b_length: int | None = None
    # (n, base) -> hard families that only the protocol scores, added to the hard set after the
    # learner's pool was frozen: no sampler or validation draws from them, so a new family re-scores
    # the stored results without changing any run's training data (`pool_instances`)
    test_hard: Callable[[int, int], list[Instance]] | None = None

    reference = "task"  # what `expected` answers: "task" (Python's integers) or "agent" (own_agent.py)

    @cached_property
    def agent(self) -> Transducer:
        return self.build_agent(self.base)

    def describe(self) -> dict:
        """What reports say about the reference answer (an `AgentTask` says which agent)."""
        return {"reference": self.reference}

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.agent.alphabet

    @property
    def blank(self) -> int:
        return self.alphabet.index(BLANK)

    @property
    def operand_symbols(self) -> tuple[str, ...]:
        return self.symbols or digit_symbols(self.base)

    def check(self, a: str, b: str = "", name: str = "user") -> Instance:
        """Validate operands given by a user; one-line DfstError on the first problem."""
        if self.operands == 1:
            if b != "":
                raise DfstError(f"task {self.name} takes one operand, not two")
            inst = Instance(self._check_operand(a, "operand"), "", name)
        else:
            inst = Instance(self._check_operand(a, "first operand"),
                            self._check_operand(b, "second operand"), name)
        problem = self.domain_problem(inst.a, inst.b)
        if problem is not None:
            raise DfstError(f"not a {self.name} instance: {problem}")
        return inst

    def domain_problem(self, a: str, b: str) -> str | None:
        """Why operands of the task's symbols are no instance of it (a < b in sub2), or None."""
        if self.domain is None:
            return None
        with python_int_digits():  # (the task's own code, as the answer function: python_int_digits)
            return self.domain(a, b, self.base)

    def _check_operand(self, text: str, label: str) -> str:
        if self.symbols is None:
            return check_operand(text, self.base, label)
        if text == "":
            raise DfstError(f"{label} is empty")
        bad = next((ch for ch in text if ch not in self.symbols), None)
        if bad is not None:
            shown = repr(text if len(text) <= 24 else text[:20] + "...")
            raise DfstError(f"{label} {shown} has {bad!r}: task {self.name}'s operands are strings of "
                            f"{' '.join(self.symbols)}")
        return text

    def example(self, n: int, m: int) -> Instance:
        """An instance with operands of n and m symbols where the task allows (its shape is what counts)."""
        if self.generate is None:
            top = self.operand_symbols[-1]
            return self.check(top * n, top * m if self.operands == 2 else "")
        with python_int_digits():
            a, b = self.generate(np.random.default_rng(0), n, m, self.base)
        return Instance(a, b, "example")

    def show(self, a: str, b: str) -> str:
        """The instance as people write it: "987 + 45", "100 ÷ 7", "1011" (one operand)."""
        if self.operands == 1:
            return a
        return f"{a} {OPERATORS.get(self.operation, ',')} {b}"

    def layout(self, instance: Instance) -> Layout:
        return self.draw(instance.a, instance.b, self.base)

    def expected(self, instance: Instance) -> str:
        if self.answer is None:
            return exact_answer(self.operation, instance.a, instance.b, self.base)
        try:
            with python_int_digits():
                answer = self.answer(instance.a, instance.b, self.base)
        except (DfstError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # the user's code, at a length registration did not check
            raise DfstError(f"task {self.name}'s answer function raised {type(exc).__name__}: {exc} on "
                            f"operands of {len(instance.a):,} and {len(instance.b):,} symbols") from None
        if not isinstance(answer, str):
            raise DfstError(f"task {self.name}'s answer function returned {answer!r} "
                            f"({type(answer).__name__}), not a string")
        return canonical(answer) if self.readout == "number" else answer

    def max_steps(self, instance: Instance) -> int:
        """The step bound on `instance`; a DfstError if the task's bound is not a whole number of
        steps the engine holds (a user's bound may grow past int64 at lengths registration never saw)."""
        return self.step_bound_at(len(instance.a), len(instance.b))

    def step_bound_at(self, n: int, m: int) -> int:
        """The step bound at operands of n and m digits, checked as max_steps says."""
        steps = self.step_bound(n, m, self.base)
        problem = step_bound_problem(steps)
        if problem is not None:
            raise DfstError(f"task {self.name}: at {n:,} and {m:,} digits {problem}")
        return int(steps)

    def time_growth(self, n: int, last: int) -> float:
        """How many times longer a length of n digits runs than one of `last`: its step bound's growth
        (linear in addition and in div10x1's columns, quadratic in multiplication and reversal)."""
        return self.step_bound(n, n, self.base) / self.step_bound(last, last, self.base)

    def hard_instances(self, n: int) -> list[Instance]:
        """The hard structured set at n digits, without duplicates: what the protocol scores."""
        return _unique(self.hard_families(n))

    def hard_families(self, n: int) -> list[Instance]:
        """Every family of the hard set at n digits, the test-only ones last, repeats included."""
        with python_int_digits():
            return [*self.hard(n, self.base), *(self.test_hard(n, self.base) if self.test_hard else [])]

    def pool_instances(self, n: int) -> list[Instance]:
        """The structured instances at n digits that a learner's samplers and validation may draw: the
        hard set without its test-only families (`test_hard`)."""
        with python_int_digits():
            return _unique(self.hard(n, self.base))

    def short_instances(self, n: int) -> list[Instance]:
        """Every instance whose operands have 1..n symbols (leading zeros included), shortest first."""
        strings = ["".join(p) for k in range(1, n + 1) for p in product(self.operand_symbols, repeat=k)]
        pairs = [(a, b) for a in strings for b in (strings if self.operands == 2 else [""])]
        return [Instance(a, b, "exhaustive") for a, b in pairs
                if self.domain_problem(a, b) is None]

    def exhaustive_length(self, at_most: int, max_digits: int | None = None) -> int:
        """The longest length (up to `max_digits`, if given) whose `short_instances` number at most
        `at_most` operand pairs (0: none): how far every instance can be run."""
        n = 0
        while (max_digits is None or n < max_digits) and self.short_count(n + 1) <= at_most:
            n += 1
        return n

    def short_count(self, n: int) -> int:
        """How many operand pairs `short_instances(n)` looks at."""
        strings = sum(self.base ** k for k in range(1, n + 1))
        return strings if self.operands == 1 else strings * strings

    def random_instances(self, n: int, count: int, seed: int, m: int | None = None) -> list[Instance]:
        """`count` pairs of an n-digit and an m-digit operand (m = n by default), seeded."""
        rng = np.random.default_rng(seed)
        return [self.random_instance(rng, n, m or n) for _ in range(count)]

    def random_instance(self, rng: np.random.Generator, n: int, m: int) -> Instance:
        """One random instance of about n and m symbols, drawn from `rng` (the task's `generate`;
        without one, random operands of the task's symbols: `a` alone for a task of one operand)."""
        if self.generate is not None:
            with python_int_digits():
                return Instance(*self.generate(rng, n, m, self.base))
        a = self._symbols_of(random_operand(rng, n, self.base))
        return Instance(a, self._symbols_of(random_operand(rng, m, self.base)) if self.operands == 2 else "")

    def _symbols_of(self, digits: str) -> str:
        """Digits (values 0..base-1) written in the task's operand symbols."""
        if self.symbols is None:
            return digits
        return digits.translate(str.maketrans("".join(digit_symbols(self.base)), "".join(self.symbols)))

    def read_answer(self, cells: np.ndarray, answer: tuple[int, int]) -> str | None:
        """The answer the readout finds in the answer row up to the answer cell (by default: digits
        leftwards from `answer` until a non-digit); None if there is none."""
        return READOUTS[self.readout](cells[answer[0], : answer[1] + 1], self.base, self.alphabet)

    def read_grid_answer(self, grid: Grid, answer: tuple[int, int]) -> str | None:
        row, col = answer
        lo = min((c for r, c in grid.cells if r == row), default=col)
        line = np.array([grid.read((row, c)) for c in range(min(lo, col), col + 1)], dtype=np.int64)
        return READOUTS[self.readout](line, self.base, self.alphabet)


def random_operand(rng: np.random.Generator, n: int, base: int) -> str:
    """n digits with a non-zero leading digit."""
    if n < 1:
        raise ValueError(f"operands need at least one digit, got {n}")
    digits = rng.integers(0, base, size=n)
    digits[0] = rng.integers(1, base)
    return digits_to_text(digits)


def _unique(instances: list[Instance]) -> list[Instance]:
    """The instances in order, each pair of operands once (its first)."""
    seen: dict[tuple[str, str], Instance] = {}
    for inst in instances:
        seen.setdefault((inst.a, inst.b), inst)
    return list(seen.values())


_lifted = {"calls": 0, "before": 0}  # answer functions running now (threads of the rollout pool)
_lifted_lock = threading.Lock()


@contextmanager
def python_int_digits() -> Iterator[None]:
    """Python's limit on int/str conversions (4,300 digits) lifted while a task's own functions run
    (its answer, hard set, generator and domain). The limit guards a service against quadratic
    conversions of text an attacker sized; here the text is operands dfst drew or the user gave at
    the lengths the user asked for (each under dfst's length and memory caps), and the function is
    the user's own code, so one written with int() works at 10,000 digits as at 1,000
    (registration checks 1,000).
    The setting is the interpreter's: counted, so that the last of several threads restores it."""
    with _lifted_lock:
        if _lifted["calls"] == 0:
            _lifted["before"] = sys.get_int_max_str_digits()
            sys.set_int_max_str_digits(0)
        _lifted["calls"] += 1
    try:
        yield
    finally:
        with _lifted_lock:
            _lifted["calls"] -= 1
            if _lifted["calls"] == 0:
                sys.set_int_max_str_digits(_lifted["before"])


def step_bound_problem(steps: object) -> str | None:
    """Why `steps` is no step bound (not a positive whole number, or more than MAX_STEP_BOUND)."""
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 1:
        return f"its step bound is {steps!r}, not a positive whole number"
    if steps > MAX_STEP_BOUND:
        return f"its step bound is {int(steps):.3g} steps, more than the engine counts (2**62)"
    return None
