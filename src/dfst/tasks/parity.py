"""Parity of a binary string (task parity2): the count of 1s, mod 2, as one digit.

Layout (`oneline.py`): the string on row 1, the agent on its first symbol; the answer is written in
the first blank after it:

    row 1   . 1 0 1 1 1 .    -> the last cell becomes 0 (four 1s), the answer

Algorithm: walk right with the parity in the state (even, odd); on the blank write it and stop.
States: 3; alphabet: 0, 1 and the blank.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.base import BLANK, Instance, alphabet_for
from dfst.tasks.oneline import ROW, draw_row, hard_strings, random_string, symbol_values


def build_parity_agent(base: int) -> Transducer:
    zero, one = alphabet_for(base)[:2]
    rules = [Rule("even", zero, "even", zero, "R"), Rule("even", one, "odd", one, "R"),
             Rule("odd", zero, "odd", zero, "R"), Rule("odd", one, "even", one, "R"),
             Rule("even", BLANK, "halt", zero, "S"), Rule("odd", BLANK, "halt", one, "S")]
    return make_transducer(["even", "odd", "halt"], alphabet_for(base), rules, initial="even",
                           final="halt", blank=BLANK, name="parity2")


def draw_parity(a: str, b: str, base: int) -> Layout:
    return draw_row(symbol_values(a, alphabet_for(base)), base, extra_columns=1, answer=(ROW, len(a) + 1))


def parity_answer(a: str, b: str, base: int) -> str:
    return str(a.count("1") % 2)


def generate_string(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    return random_string(rng, n, alphabet_for(base)[:base]), ""


def hard_parity(n: int, base: int) -> list[Instance]:
    return hard_strings(n, alphabet_for(base)[:base])


def scan_steps(n: int, m: int, base: int) -> int:
    return n + 2
