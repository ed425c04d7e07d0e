"""Sorting a binary string (task sort2): its 0s, then its 1s, in place.

Layout (`oneline.py`): the string on row 1, the agent on its first symbol; the answer is the string
itself, read exactly (leading zeros count) leftwards from its last cell:

    row 1   . 1 0 1 0 .      -> 0 0 1 1

Algorithm, one pass per 0 that stands after a 1:

    zeros   walk right over the leading 0s; on the first 1 write 0 and carry the 1   -> carry
            (a blank: nothing left to sort, stop)
    carry   walk right over 1s; on a 0 write the carried 1 and go back               -> back
            (a blank: the rest were all 1s; return the 1 to the 0 written for it)    -> restore
    back    walk left to the blank before the string, then step onto it              -> zeros
    restore walk left over 1s; on the 0 written for the carried 1, write 1 and stop

States: 5; alphabet: 0, 1 and the blank. Steps: quadratic, about 2·n per misplaced 0.
"""

from __future__ import annotations

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.base import BLANK, alphabet_for
from dfst.tasks.oneline import ROW, draw_row, symbol_values


def build_sorter_agent(base: int) -> Transducer:
    zero, one = alphabet_for(base)[:2]
    rules = [Rule("zeros", zero, "zeros", zero, "R"), Rule("zeros", one, "carry", zero, "R"),
             Rule("zeros", BLANK, "halt", BLANK, "S"),
             Rule("carry", one, "carry", one, "R"), Rule("carry", zero, "back", one, "L"),
             Rule("carry", BLANK, "restore", BLANK, "L"),
             Rule("back", zero, "back", zero, "L"), Rule("back", one, "back", one, "L"),
             Rule("back", BLANK, "zeros", BLANK, "R"),
             Rule("restore", one, "restore", one, "L"), Rule("restore", zero, "halt", one, "S")]
    return make_transducer(["zeros", "carry", "back", "restore", "halt"], alphabet_for(base), rules,
                           initial="zeros", final="halt", blank=BLANK, name="sort2")


def draw_sorting(a: str, b: str, base: int) -> Layout:
    return draw_row(symbol_values(a, alphabet_for(base)), base, answer=(ROW, len(a)))


def sorting_answer(a: str, b: str, base: int) -> str:
    zeros = a.count("0")  # counted, not sorted: a list of n characters would take 8 bytes each
    return "0" * zeros + "1" * (len(a) - zeros)


def sorting_steps(n: int, m: int, base: int) -> int:
    """At most n passes of at most 2n + 4 steps, and the last one."""
    return (n + 1) * (2 * n + 4)
