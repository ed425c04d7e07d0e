"""Comparison of two numbers of any lengths in any base (tasks compare2, compare10): <, = or >.

Layout: addition's (`addition.py`): a right-aligned on row 1, b under it on row 2, the agent on a's
units digit. The answer is one symbol, written on b's row in the first column where both operands
have ended (column 1: the layout's width is the longer operand plus three):

    row 1   . . 1 2 3 .      a  (agent starts on its units digit)
    row 2   . . . 4 5 .      b
    after   . > > < < .      the verdict so far replaces each of b's cells; the answer is at column 1

Algorithm, right to left, the verdict so far in the state (a more significant column overrides it)
and written on b's row as it goes, as addition writes each digit of the sum:

    cmp{s}      on a's row: read x (blank = 0) and go down carrying it      -> pair{s}{x}
    pair{s}{x}  on b's row: read y; both blank: write s and stop; otherwise
                s becomes < or > where x and y differ; write it, step left   -> up{s}
    up{s}       go back up                                                   -> cmp{s}

Writing the running verdict is what makes the task learnable from PTOs: with b's digits written back
unchanged, the verdict shows only in the last write, and trained DFSTs (compare2: 80 PTOs; compare10:
400, 8 restarts) read off automata of more states than the expert that were wrong on equal operands
(101 vs 101) and on leading zeros (1 vs 01); with it, compare2's default recipe reads off an
automaton certified for every length (docs/training.md).

States: 3·(base + 3) + 1; alphabet: the digits, the blank, then <, = and >.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dfst.arith import compare_numbers, digit_symbols
from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.addition import ROW_B, draw_addition
from dfst.tasks.base import BLANK, Instance, alphabet_for, random_operand
from dfst.tasks.hard import digit_pairs

VERDICTS = ("<", "=", ">")
NAMES = {"<": "lt", "=": "eq", ">": "gt"}


def build_comparator_agent(base: int) -> Transducer:
    digits = alphabet_for(base)[:base]
    alphabet = (*digits, BLANK, *VERDICTS)
    states, rules = [], []
    for s in VERDICTS:
        states += [f"cmp_{NAMES[s]}", *(f"pair_{NAMES[s]}_{x}" for x in (*digits, BLANK)), f"up_{NAMES[s]}"]
        for x in (*digits, BLANK):
            rules.append(Rule(f"cmp_{NAMES[s]}", x, f"pair_{NAMES[s]}_{x}", x, "D"))
            rules += [_pair_rule(s, x, y, digits) for y in (*digits, BLANK)]
        rules += [Rule(f"up_{NAMES[s]}", y, f"cmp_{NAMES[s]}", y, "U") for y in (*digits, BLANK)]
    return make_transducer([*states, "halt"], alphabet, rules, initial="cmp_eq", final="halt",
                           blank=BLANK, name=f"compare{base}")


def _pair_rule(s: str, x: str, y: str, digits: tuple[str, ...]) -> Rule:
    if x == BLANK and y == BLANK:
        return Rule(f"pair_{NAMES[s]}_{x}", y, "halt", s, "S")
    value = {d: i for i, d in enumerate(digits)} | {BLANK: 0}
    order = (value[x] > value[y]) - (value[x] < value[y])
    verdict = s if order == 0 else VERDICTS[order + 1]
    return Rule(f"pair_{NAMES[s]}_{x}", y, f"up_{NAMES[verdict]}", verdict, "L")


def comparison_answer(a: str, b: str, base: int) -> str:
    return VERDICTS[compare_numbers(a, b) + 1]


def generate_comparison(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """Numbers of n and m digits (non-zero leading digits); half the time b takes a's digit in each
    column they share with probability 3/4, so that columns tie and the verdict has to survive them.
    Independent operands almost never tie (their leading digits decide): trained on them, compare10
    read off an automaton that had never seen a 3 over a 3 after > in all but one of 1,000 PTOs, and
    answered = for 31 vs 30."""
    a, b = random_operand(rng, n, base), random_operand(rng, m, base)
    if rng.random() < 0.5:
        shared = min(n, m)
        keep = rng.random(shared) < 0.75
        tail = "".join(x if k else y for x, y, k in zip(a[n - shared:], b[m - shared:], keep))
        b = b[: m - shared] + tail
        if b[0] == digit_symbols(base)[0] and m > 1:  # a copied 0 in b's leading column
            b = random_operand(rng, 1, base) + b[1:]
    return a, b


def comparison_steps(n: int, m: int, base: int) -> int:
    """Three steps per column of the longer operand, and the verdict."""
    return 3 * (max(n, m) + 2)


def draw_comparison(a: str, b: str, base: int) -> Layout:
    """Addition's layout, the answer cell moved to column 1 of b's row (where both have ended)."""
    layout = draw_addition(a, b, base)
    return replace(layout, answer=(ROW_B, 1))


def hard_comparison(n: int, base: int) -> list[Instance]:
    """Every pair of leading digits x over y (a blank too: operands one digit apart in length) above
    n - 1 digits that already decide <, = or >, so that every rule of the expert runs at length n;
    a longer operand going on two digits past the shorter one, both ways round (000 vs 1: the
    verdict must survive a second column over a blank); and equal numbers behind leading zeros."""
    d = alphabet_for(base)[:base]
    zero, one, top = d[0], d[1], d[-1]
    cases = []
    for s in VERDICTS if n >= 2 else ():
        ta, tb = _deciding_tails(s, n - 1, zero, one)
        for x in ("", *d):
            cases += [Instance(x + ta, y + tb, f"{NAMES[s]}_{x or 'end'}_over_{y or 'end'}")
                      for y in ("", *d) if x + ta and y + tb]
    for s in VERDICTS if n >= 3 else ():
        ta, tb = _deciding_tails(s, n - 2, zero, one)
        cases += [c for x in d for c in (Instance(x + x + ta, tb, f"{NAMES[s]}_{x}{x}_past_b"),
                                         Instance(ta, x + x + tb, f"{NAMES[s]}_{x}{x}_past_a"))]
    cases += [Instance(x, y, f"digits_{x}_{y}") for x in d for y in d] if n == 1 else []
    cases += [Instance(top * n, top * n, "equal_max"), Instance(zero * n, zero, "zeros_unequal_length"),
              Instance(zero * (n - 1) + one, one, "leading_zeros_equal"),
              Instance(one, zero * (n - 1) + one, "leading_zeros_equal_swapped"),
              Instance(top * n, top * (n - 1) + d[-2], "last_digit_decides"),
              Instance(one + zero * (n - 1), top * (n - 1) if n > 1 else zero, "longer_wins")]
    return cases + _equal_runs(n, d) + _short_pairs(d)


SHORT_PAIRS = 200  # at most this many pairs of short operands in the hard set at every length


def _short_pairs(d: tuple[str, ...]) -> list[Instance]:
    """Every pair of operands of up to L digits (leading zeros included), L the most that gives at
    most SHORT_PAIRS pairs: 3 in base 2, 1 in base 10. The mutation bench found rewired verdicts that
    only such pairs kill (10 vs 1, 1 vs 100), at every length of the protocol."""
    from itertools import product

    strings: list[str] = []
    for length in range(1, 10):
        more = ["".join(p) for p in product(d, repeat=length)]
        if (len(strings) + len(more)) ** 2 > SHORT_PAIRS:
            break
        strings += more
    return [Instance(a, b, f"short_{a}_{b}") for a in strings for b in strings]


def _equal_runs(n: int, d: tuple[str, ...]) -> list[Instance]:
    """Equal operands whose columns take every pair of digits in turn (x y x y …), so the verdict "="
    must survive each column after each other one; random pairs are almost never equal. Then a
    shared prefix of every digit pair decided in the units digit, and leading zeros before it on
    either operand (1 vs 01: compare2's trained automaton once answered <)."""
    runs = [(x + y) * n for x in d for y in d]
    cases = [Instance(r[:n], r[:n], f"equal_{r[:2]}") for r in runs]
    prefix = digit_pairs(d, n - 1)
    for s, (ua, ub) in zip(VERDICTS, ((d[0], d[1]), (d[1], d[1]), (d[1], d[0]))):
        a, b = prefix + ua, prefix + ub
        cases += [Instance(a, b, f"prefix_{NAMES[s]}"), Instance(d[0] + a, b, f"prefix_{NAMES[s]}_zero_a"),
                  Instance(a, d[0] + b, f"prefix_{NAMES[s]}_zero_b")]
    return cases


def _deciding_tails(verdict: str, length: int, zero: str, one: str) -> tuple[str, str]:
    """Two strings of `length` digits whose comparison is `verdict` (decided in the units digit)."""
    low, high = zero * length, zero * (length - 1) + one
    return {"=": (low, low), "<": (low, high), ">": (high, low)}[verdict]
