"""Turing-Program scratchpads for n x 1 multiplication (Hou et al. 2024, section 5.1, appendix E.1),
and the dfst task they are scored on: mult10x1 (mult10's expert, a one-digit second operand).

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

from dfst.baselines.tp_scratchpad import BOS, CARRY_DIGITS, DIGITS, EOS, EQUALS, LINE, TIMES
from dfst.tasks import get_task


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


MULT10X1 = get_task("mult10x1")  # the registered task: n x 1 instances, its own hard set
