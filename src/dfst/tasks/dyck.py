"""Balanced brackets (task dyck): is the string of ( and ) a Dyck word? The answer is y or n.

Layout (`oneline.py`): the string on row 1 from column 1, the agent on its first symbol; the answer
symbol is written in the blank just left of the string (column 0):

    row 1   . ( ( ) ) ( ) .   -> y . . . . . .   (matched brackets become x)

Algorithm, matching each ) with the nearest unmatched ( to its left:

    find    walk right over ( and x; on a ) mark it x and go back         -> match
            (a blank: every ) is matched; go back and check)              -> check
    match   walk left over x; on a ( mark it x and go on                  -> find
            (a blank: this ) has no ( : write n)
    check   walk left over x; a ( is unmatched                            -> fail
            (a blank: all matched: write y)
    fail    walk left to the blank and write n

States: 5; alphabet: ( ) and the blank, then the mark x and the answers n and y. Steps: quadratic.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.base import BLANK, Instance
from dfst.tasks.oneline import draw_row, hard_strings, symbol_values

OPEN, CLOSE, MARK, NO, YES = "(", ")", "x", "n", "y"
BRACKETS = (OPEN, CLOSE)
ALPHABET = (OPEN, CLOSE, BLANK, MARK, NO, YES)


def build_dyck_agent(base: int) -> Transducer:
    rules = [Rule("find", OPEN, "find", OPEN, "R"), Rule("find", MARK, "find", MARK, "R"),
             Rule("find", CLOSE, "match", MARK, "L"), Rule("find", BLANK, "check", BLANK, "L"),
             Rule("match", MARK, "match", MARK, "L"), Rule("match", OPEN, "find", MARK, "R"),
             Rule("match", BLANK, "halt", NO, "S"),
             Rule("check", MARK, "check", MARK, "L"), Rule("check", OPEN, "fail", OPEN, "L"),
             Rule("check", BLANK, "halt", YES, "S"),
             Rule("fail", OPEN, "fail", OPEN, "L"), Rule("fail", MARK, "fail", MARK, "L"),
             Rule("fail", BLANK, "halt", NO, "S")]
    return make_transducer(["find", "match", "check", "fail", "halt"], ALPHABET, rules, initial="find",
                           final="halt", blank=BLANK, name="dyck")


def draw_dyck(a: str, b: str, base: int) -> Layout:
    return draw_row(symbol_values(a, BRACKETS), base)


def is_balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += 1 if ch == OPEN else -1
        if depth < 0:
            return False
    return depth == 0


def dyck_answer(a: str, b: str, base: int) -> str:
    return YES if is_balanced(a) else NO


def generate_brackets(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """n brackets: half the time a uniformly random Dyck word (n even), else one with a bracket
    flipped, or a random arrangement of as many ( as ): hard to tell apart from a balanced one."""
    kind = rng.integers(0, 4)
    if n % 2 or kind == 3:
        return "".join(BRACKETS[i] for i in rng.integers(0, 2, size=n)), ""
    word = _random_dyck_word(rng, n // 2)
    if kind == 2:  # one bracket flipped
        i = int(rng.integers(0, n))
        word = word[:i] + (CLOSE if word[i] == OPEN else OPEN) + word[i + 1:]
    return word, ""


def _random_dyck_word(rng: np.random.Generator, pairs: int) -> str:
    """Uniform among Dyck words of `pairs` pairs (the cycle lemma: of the rotations of a shuffle of
    pairs + 1 ( and pairs ), exactly one keeps every prefix positive; drop its first ()."""
    steps = np.array([1] * (pairs + 1) + [-1] * pairs)
    rng.shuffle(steps)
    before = np.concatenate([[0], np.cumsum(steps)[:-1]])  # the height before each step
    start = len(before) - 1 - int(np.argmin(before[::-1]))  # the last lowest point
    rotated = np.roll(steps, -start)
    return "".join(OPEN if s > 0 else CLOSE for s in rotated[1:])


def hard_dyck(n: int, base: int) -> list[Instance]:
    """An unmatched bracket at either end or deep inside, flat then nested words, and the strings of
    `hard_strings` (nested and flat words among them: halves, alternating)."""
    half = n // 2
    cases = {"open_last": "()" * ((n - 1) // 2) + OPEN * (1 + (n - 1) % 2),
             "nested_then_close": OPEN * (half - 1) + CLOSE * half + OPEN if n >= 2 else CLOSE,
             "flat_then_nested": "()" * (half // 2) + OPEN * (half - half // 2) + CLOSE * (half - half // 2),
             "deep_unmatched": OPEN * half + CLOSE * (half - 2) + OPEN * 2 + CLOSE * (n % 2)}
    out = [Instance(text, "", name) for name, text in cases.items() if len(text) == n]
    return out + hard_strings(n, BRACKETS)
