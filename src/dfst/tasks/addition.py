"""Addition in any base (tasks add2, add10).

Layout: the operands are right-aligned in two rows, units in the same column; the agent starts on
the units digit of `a` and writes the sum over `b`, which is where the answer is read:

    row 1   . . 9 9 9 .      a  (agent starts on its units digit)
    row 2   . . . . 1 .      b  -> becomes 1 0 0 0, the answer
            (a one-cell blank margin surrounds the working region)

Algorithm: the column adder (`adder.py`) with `a` as the operand and `b` as the accumulator. When
`a` ends with no carry the digits of `b` still to the left are already the answer, so the agent
halts at once (write blank, S); a final carry ripples through `b` and then halts.
States: the adder's base + 6 plus `halt`; alphabet: the digits and the blank.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.adder import adder_rules, adder_states
from dfst.tasks.arith import text_to_digits
from dfst.tasks.base import BLANK, alphabet_for

ROW_A, ROW_B = 1, 2


def build_adder_agent(base: int) -> Transducer:
    alphabet = alphabet_for(base)
    digits = alphabet[:base]
    rules = adder_rules(digits, BLANK, done=("halt", "S"), absorbed=("halt", "S"))
    return make_transducer([*adder_states(base), "halt"], alphabet, rules, initial="add0",
                           final="halt", blank=BLANK, name=f"add{base}")


def draw_addition(a: str, b: str, base: int) -> Layout:
    width = max(len(a), len(b)) + 3  # carry column plus one margin column each side
    units = width - 2
    cells = np.full((4, width), base, dtype=np.uint8)  # symbol `base` is the blank
    cells[ROW_A, units + 1 - len(a): units + 1] = text_to_digits(a)
    cells[ROW_B, units + 1 - len(b): units + 1] = text_to_digits(b)
    return Layout(cells, head=(ROW_A, units), answer=(ROW_B, units))


def addition_steps(n: int, m: int, base: int) -> int:
    """Three steps per column plus a carry ripple: a safe step limit for the expert."""
    return 4 * (max(n, m) + 2)
