"""Turing-Program scratchpads for n x 1 multiplication (Hou et al. 2024, section 5.1, appendix E.1),
and the dfst task they are scored on: mult10 with a one-digit second operand ("mult10x1").

The program is the prompt line, then one line per step of the grade-school n x 1 algorithm (right
to left over a, one digit at a time), each a copy of the previous tape with a few local changes:

    $4567*8=|456*8=f6|45*8=f36|4*8=e536|*8=d6536|36536#

A line is `A*b=cR|`: the digits of a not yet consumed, the multiplier b, the carry c and the result
digits produced so far. The carry of n x 1 is 0..8, so it is its own tape cell, written with the
addition tape's letters (a..i for 0..8). One step drops the last digit d of A, replaces c by
(d*b + c) div 10 and writes (d*b + c) mod 10 in front of R: a line differs from the one above only
at the end of A and at the front of R (the paper's figure 13 also marks a head; here, as in the
addition tape, the head is implicitly the end of A). Once A is empty the answer line writes the
final carry (if not 0) and R. The line length is constant, so an n x 1 program has about n^2 tokens.
"""

from __future__ import annotations

import dataclasses

from dfst.baselines.tp_scratchpad import BOS, CARRY_DIGITS, DIGITS, EOS, EQUALS, LINE, TIMES
from dfst.tasks import get_task
from dfst.tasks.base import Instance, Task
from dfst.tasks.hard import hard_multiplication


def prompt_text(a: str, b: str) -> str:
    """What the model is given: BOS and the first tape line."""
    return f"{BOS}{a}{TIMES}{b}{EQUALS}{LINE}"


def multiplication_program(a: str, b: str) -> str:
    """The full program for a * b (a a digit string, b one digit), prompt included."""
    if len(b) != 1:
        raise ValueError(f"n x 1 programs need a one-digit multiplier, got {b!r}")
    lines, result, carry = [prompt_text(a, b)], "", 0
    while a:
        carry, digit = divmod(int(a[-1]) * int(b) + carry, 10)
        a, result = a[:-1], DIGITS[digit] + result
        lines.append(f"{a}{TIMES}{b}{EQUALS}{CARRY_DIGITS[carry]}{result}{LINE}")
    answer = (DIGITS[carry] if carry else "") + result
    return "".join(lines) + answer + EOS


def hard_by_one_digit(n: int, base: int) -> list[Instance]:
    """mult10's hard instances with an n-digit a, each with a one-digit b (its own, else the top digit).

    The top digit maximises the carries (up to base - 2), which is where an n x 1 program goes wrong.
    """
    top = DIGITS[base - 1]
    return [inst if len(inst.b) == 1 else Instance(inst.a, top, f"{inst.name}_by_{top}")
            for inst in hard_multiplication(n, base) if len(inst.a) == n]


@dataclasses.dataclass(frozen=True)
class OneDigitMultiplierTask(Task):
    """A multiplication task whose random pairs are an n-digit a and a one-digit b."""

    def random_instances(self, n: int, count: int, seed: int, m: int | None = None) -> list[Instance]:
        return super().random_instances(n, count, seed, m=1)


def by_one_digit_task(base_task: Task) -> OneDigitMultiplierTask:
    """`base_task` (mult10) scored on n x 1 instances, named e.g. "mult10x1"."""
    fields = {f.name: getattr(base_task, f.name) for f in dataclasses.fields(base_task)}
    return OneDigitMultiplierTask(**fields | {"name": f"{base_task.name}x1", "hard": hard_by_one_digit,
                                              "summary": f"{base_task.summary}, b of one digit"})


MULT10X1 = by_one_digit_task(get_task("mult10"))
