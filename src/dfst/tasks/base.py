"""What a task is: a layout on the grid, an expert agent, a readout and instance generators.

No `from __future__ import annotations` here: the dataclass fields keep real types, so that a
subclass defined elsewhere (a baseline's task) documents its generated `__init__` without importing
these names (pdoc evaluates string annotations in the subclass's module).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dfst.arith import canonical, check_operand, digit_symbols, digits_to_text, exact_answer
from dfst.automata import Transducer
from dfst.grid.grid import Grid, Layout

BLANK = "_"


@dataclass(frozen=True)
class Instance:
    """Two operands as digit strings (most significant first) and a name for reports."""

    a: str
    b: str
    name: str = "random"


def alphabet_for(base: int) -> tuple[str, ...]:
    """Digits first, so that symbol index == digit value; then the blank."""
    return (*digit_symbols(base), BLANK)


@dataclass(frozen=True)
class Task:
    """A registered task. `draw` builds the layout, `build_agent` the expert, `hard` the hard set."""

    name: str
    operation: str  # "add" or "mult"
    base: int
    summary: str
    build_agent: Callable[[int], Transducer]
    draw: Callable[[str, str, int], Layout]
    hard: Callable[[int, int], list[Instance]]
    step_bound: Callable[[int, int, int], int]  # (len a, len b, base) -> steps the expert needs, at most
    # (a, b, base) -> the answer's digits, for a task of your own; None: the operation's (add, mult)
    answer: Callable[[str, str, int], str] | None = None

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

    def check(self, a: str, b: str) -> Instance:
        """Validate operands given by a user; one-line DfstError on the first problem."""
        return Instance(check_operand(a, self.base, "first operand"),
                        check_operand(b, self.base, "second operand"), "user")

    def layout(self, instance: Instance) -> Layout:
        return self.draw(instance.a, instance.b, self.base)

    def expected(self, instance: Instance) -> str:
        if self.answer is not None:
            return canonical(self.answer(instance.a, instance.b, self.base))
        return exact_answer(self.operation, instance.a, instance.b, self.base)

    def max_steps(self, instance: Instance) -> int:
        return self.step_bound(len(instance.a), len(instance.b), self.base)

    def hard_instances(self, n: int) -> list[Instance]:
        """The hard structured set at n digits, without duplicates."""
        seen, out = set(), []
        for inst in self.hard(n, self.base):
            if (inst.a, inst.b) not in seen:
                seen.add((inst.a, inst.b))
                out.append(inst)
        return out

    def random_instances(self, n: int, count: int, seed: int, m: int | None = None) -> list[Instance]:
        """`count` pairs of an n-digit and an m-digit operand (m = n by default), seeded."""
        rng = np.random.default_rng(seed)
        return [Instance(random_operand(rng, n, self.base), random_operand(rng, m or n, self.base))
                for _ in range(count)]

    def read_answer(self, cells: np.ndarray, answer: tuple[int, int]) -> str | None:
        """Digits leftwards from `answer` until a non-digit; None if there is no digit there."""
        return read_row_answer(cells[answer[0], : answer[1] + 1], self.base)

    def read_grid_answer(self, grid: Grid, answer: tuple[int, int]) -> str | None:
        row, col = answer
        lo = min((c for r, c in grid.cells if r == row), default=col)
        line = np.array([grid.read((row, c)) for c in range(min(lo, col), col + 1)], dtype=np.int64)
        return read_row_answer(line, self.base)


def random_operand(rng: np.random.Generator, n: int, base: int) -> str:
    """n digits with a non-zero leading digit."""
    if n < 1:
        raise ValueError(f"operands need at least one digit, got {n}")
    digits = rng.integers(0, base, size=n)
    digits[0] = rng.integers(1, base)
    return digits_to_text(digits)


def read_row_answer(line: np.ndarray, base: int) -> str | None:
    """`line` ends at the answer's least significant cell; read the run of digits ending there."""
    not_digit = np.flatnonzero(line[::-1] >= base)
    length = int(not_digit[0]) if not_digit.size else len(line)
    if length == 0:
        return None
    digits = line[len(line) - length:]
    return canonical(digits_to_text(digits))
