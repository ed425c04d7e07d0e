"""Comparison of two numbers of any lengths in any base (tasks compare2, compare10): <, = or >.

Layout: addition's (`addition.py`): a right-aligned on row 1, b under it on row 2, the agent on a's
units digit. The answer is one symbol, written on b's row in the first column where both operands
have ended (column 1: the layout's width is the longer operand plus three):

    row 1   . . 1 2 3 .      a  (agent starts on its units digit)
    row 2   . . . 4 5 .      b
    after   . > > < < .      the verdict so far replaces each of b's cells; the answer is at column 1

Algorithm, right to left, the verdict so far on the grid, not in the state: a decided column writes
its verdict over b's cell as addition writes each digit of the sum, and a tied column steps right to
read the verdict so far back off the grid (the blank right of the units digit reads as =):

    cmp        on a's row: read x (blank = 0) and go down carrying it     -> pair{x}
    pair{x}    on b's row: read y; x and y differ: write < or >, left      -> up
               x equals y: step right                                      -> back
               both blank (the end): step right                            -> back_end
    back       read the verdict v so far, step back left                   -> put{v}
    put{v}     write v over b's cell, step left                            -> up
    up         go back up                                                  -> cmp
    back_end   read v, step back left                                      -> end{v}
    end{v}     write v where both operands have ended and stop

Only a's digit and, for one step, a verdict read off the grid live in the state. Earlier experts kept
the verdict in the state for the whole run: with b's digits written back unchanged the verdict showed
only in the last write, and trained DFSTs read off automata of more states than the expert, wrong on
equal operands (101 vs 101) and on leading zeros (1 vs 01); writing the running verdict made compare2
learnable, but compare10's 40-state expert (three copies of every state, one per verdict) still did
not train, its verdict copies nearly merged in the trained DFST (docs/research/training.md section 12).

States: base + 12 (22 in base 10), halt included; alphabet: the digits, the blank, then <, = and >.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.addition import ROW_B, draw_addition
from dfst.tasks.arith import compare_numbers, digit_symbols
from dfst.tasks.base import BLANK, Instance, alphabet_for, random_operand
from dfst.tasks.hard import digit_pairs

VERDICTS = ("<", "=", ">")
NAMES = {"<": "lt", "=": "eq", ">": "gt"}


def build_comparator_agent(base: int) -> Transducer:
    digits = alphabet_for(base)[:base]
    alphabet = (*digits, BLANK, *VERDICTS)
    column = (*digits, BLANK)
    states = ["cmp", *(f"pair_{x}" for x in column), "back", *(f"put_{NAMES[v]}" for v in VERDICTS), "up",
              "back_end", *(f"end_{NAMES[v]}" for v in VERDICTS), "halt"]
    rules = [Rule("cmp", x, f"pair_{x}", x, "D") for x in column]
    rules += [_pair_rule(x, y, digits) for x in column for y in column]
    # the verdict of the column to the right: blank right of the units digit, never at the end
    rules.append(Rule("back", BLANK, "put_eq", BLANK, "L"))
    for v in VERDICTS:
        rules += [Rule("back", v, f"put_{NAMES[v]}", v, "L"), Rule("back_end", v, f"end_{NAMES[v]}", v, "L"),
                  *(Rule(f"put_{NAMES[v]}", y, "up", v, "L") for y in column),
                  Rule(f"end_{NAMES[v]}", BLANK, "halt", v, "S")]
    rules += [Rule("up", y, "cmp", y, "U") for y in column]
    return make_transducer(states, alphabet, rules, initial="cmp", final="halt", blank=BLANK,
                           name=f"compare{base}")


def _pair_rule(x: str, y: str, digits: tuple[str, ...]) -> Rule:
    """x (a's digit, in the state) over y: a decided column writes its verdict; a tie steps right to
    read the verdict so far off the grid, and both blank (the end) does so before the answer."""
    if x == BLANK and y == BLANK:
        return Rule(f"pair_{x}", y, "back_end", y, "R")
    value = {d: i for i, d in enumerate(digits)} | {BLANK: 0}
    order = (value[x] > value[y]) - (value[x] < value[y])
    if order == 0:
        return Rule(f"pair_{x}", y, "back", y, "R")
    return Rule(f"pair_{x}", y, "up", VERDICTS[order + 1], "L")


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
    """At most five steps per column of the longer operand (a tie reads the verdict back), and the end."""
    return 5 * (max(n, m) + 2)


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
    return cases + _equal_runs(n, d) + _short_pairs(d) + _decided_above(d)


def overturned_ties(n: int, base: int) -> list[Instance]:
    """A test-only family (`Task.test_hard`): a verdict decided in the units column, a run of n - 2
    tied columns of one digit k, and the top column deciding the other way (0kk…k1 vs 1kk…k0), for
    every k, both ways round. Each tied column writes the verdict read back off the grid, so the
    rule after it runs n - 2 times on a verdict that the top column overturns: the mutation bench's
    near ties found 18 rewired experts of compare10 (after a digit in state put_gt) that nothing
    else in the protocol kills."""
    if n < 3:
        return []
    d = alphabet_for(base)[:base]
    zero, one = d[0], d[1]
    return [Instance(low + k * (n - 2) + high, high + k * (n - 2) + low,
                     f"tie_{k}_run_{NAMES[units]}_overturned")
            for k in d for low, high, units in ((zero, one, ">"), (one, zero, "<"))]


def _decided_above(d: tuple[str, ...]) -> list[Instance]:
    """Every pair of digits x over y under a column that decides < (0x vs 1y) and one that decides >
    with a digit other than 0 under it (2x vs 1y), and a tie of every digit k between a units column
    decided < and a top column decided > (2k0 vs 1k1). The mutation bench found 634 rewired rules of
    compare10's expert that only such pairs kill (x vs 1y, 12 vs 10, 2k0 vs 1k1), at every length."""
    zero, one = d[0], d[1]
    top, under = (d[2], d[1]) if len(d) > 2 else (d[1], d[0])
    cases = [Instance(zero + x, one + y, f"{x}_over_{y}_below_lt") for x in d for y in d]
    cases += [Instance(top + x, under + y, f"{x}_over_{y}_below_gt") for x in d for y in d]
    return cases + [Instance(top + k + zero, under + k + one, f"tie_{k}_between_lt_and_gt") for k in d]


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
