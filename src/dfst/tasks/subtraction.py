"""Subtraction a - b with a >= b in any base (tasks sub2, sub10): borrow chains, operands of any length.

Layout: addition's (`addition.py`): a right-aligned on row 1, b under it on row 2, the agent on a's
units digit; the difference is written over b, where the answer is read:

    row 1   . 1 0 0 0 .      a  (agent starts on its units digit)
    row 2   . . . . 1 .      b  -> becomes 0 9 9 9, the answer (999)

Algorithm, column by column right to left, the borrow in the state:

    take{c}  on a's row with borrow c: read digit x, go down carrying v = x - c      -> diff{v}
    diff{v}  on b's row (blank = 0): write (v - y) mod base, step left, borrow v < y -> back{c}
    back{c}  one column left on b's row: go back up                                 -> take{c}

When a ends (a blank on its row) the borrow is 0, since a >= b: halt. b's leading zeros past a's
length stay, and are leading zeros of the answer. States: base + 6; alphabet: the digits and the blank.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer
from dfst.tasks.arith import compare_numbers, exact_answer
from dfst.tasks.base import BLANK, Instance, alphabet_for, random_operand
from dfst.tasks.hard import hard_addition


def _diff(v: int) -> str:
    return f"diff{v}" if v >= 0 else "diff_borrow"


def build_subtractor_agent(base: int) -> Transducer:
    alphabet = alphabet_for(base)
    digits = alphabet[:base]
    states = ["take0", "take1", _diff(-1), *(_diff(v) for v in range(base)), "back0", "back1", "halt"]
    rules = [Rule("take0", BLANK, "halt", BLANK, "S")]
    for c in (0, 1):
        rules += [Rule(f"take{c}", x, _diff(v - c), x, "D") for v, x in enumerate(digits)]
        rules += [Rule(f"back{c}", y, f"take{c}", y, "U") for y in (*digits, BLANK)]
    for v in range(-1, base):
        for y, sym in enumerate((*digits, BLANK)):
            t = v - (0 if sym == BLANK else y)
            rules.append(Rule(_diff(v), sym, f"back{int(t < 0)}", digits[t % base], "L"))
    return make_transducer(states, alphabet, rules, initial="take0", final="halt", blank=BLANK,
                           name=f"sub{base}")


def larger_first(a: str, b: str, base: int) -> str | None:
    """Why (a, b) is no subtraction instance: a < b (digit strings compared without int())."""
    return "the first operand must be at least the second (a >= b)" if compare_numbers(a, b) < 0 else None


def generate_subtraction(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """Random numbers of n and m digits, the larger first (so the lengths may come swapped)."""
    x, y = random_operand(rng, n, base), random_operand(rng, m, base)
    return (x, y) if larger_first(x, y, base) is None else (y, x)


def subtraction_steps(n: int, m: int, base: int) -> int:
    """Three steps per column of the longer operand, and the halt."""
    return 3 * (max(n, m) + 2)


def hard_subtraction(n: int, base: int) -> list[Instance]:
    """Addition's hard set turned around (the sum minus one addend: every carry chain becomes a borrow
    chain, past the shorter operand too), and a - a, a - 0, 10…0 - 1 and 10…0 - 9…9."""
    cases = []
    for inst in hard_addition(n, base):
        total = exact_answer("add", inst.a, inst.b, base)
        cases += [Instance(total, inst.b, f"{inst.name}_minus_b"),
                  Instance(total, inst.a, f"{inst.name}_minus_a")]
    top, zero, one = alphabet_for(base)[base - 1], alphabet_for(base)[0], alphabet_for(base)[1]
    cases += [Instance(one + zero * n, one, "borrow_chain"),
              Instance(one + zero * n, top * n, "power_minus_max"),
              Instance(top * n, top * n, "equal"), Instance(top * n, zero, "minus_zero")]
    return cases
