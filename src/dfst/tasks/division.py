"""Long division by one digit (task div10x1): quotient and remainder of an n-digit number.

Layout: the divisor d (one digit, not 0) on row 1 at column 1, a blank, then the dividend a; the
agent starts on d. The quotient's digits replace a's, leading zeros and all; the remainder is
written one blank past a's last digit, where the answer is read as "quotient remainder":

    row 1   . 7 . 1 0 0 . . .    -> . 7 . 0 1 4 . 2 .   answer "14 2"

Algorithm, left to right as on paper, the divisor and the running remainder in the state:

    read_d      read d and step right                                  -> gap{d}
    gap{d}      step over the blank onto a's first digit                -> div{d}_{0}
    div{d}_{r}  read x: write (10r + x) // d, step right               -> div{d}_{(10r + x) mod d}
                a blank: step right                                    -> rem{r}
    rem{r}      write r and stop

States: read_d, gap{d} and div{d}_{r} for d = 1..9 (54), rem{r} (9) and halt: 65 in base 10;
alphabet: the digits and the blank.
"""

from __future__ import annotations

import numpy as np

from dfst.arith import canonical, digit_symbols
from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.base import BLANK, Instance, alphabet_for, random_operand
from dfst.tasks.oneline import draw_row, symbol_values


def build_divider_agent(base: int) -> Transducer:
    digits = alphabet_for(base)[:base]
    states, rules = ["read_d"], []
    for d in range(1, base):
        states += [f"gap{d}", *(f"div{d}_{r}" for r in range(d))]
        rules += [Rule("read_d", digits[d], f"gap{d}", digits[d], "R"),
                  Rule(f"gap{d}", BLANK, f"div{d}_0", BLANK, "R")]
        for r in range(d):
            rules.append(Rule(f"div{d}_{r}", BLANK, f"rem{r}", BLANK, "R"))
            for x, sym in enumerate(digits):
                q, rest = divmod(base * r + x, d)
                rules.append(Rule(f"div{d}_{r}", sym, f"div{d}_{rest}", digits[q], "R"))
    states += [f"rem{r}" for r in range(base - 1)]
    rules += [Rule(f"rem{r}", BLANK, "halt", digits[r], "S") for r in range(base - 1)]
    return make_transducer([*states, "halt"], alphabet_for(base), rules, initial="read_d", final="halt",
                           blank=BLANK, name=f"div{base}x1")


def draw_division(a: str, b: str, base: int) -> Layout:
    symbols = alphabet_for(base)
    values = np.concatenate([symbol_values(b, symbols), [base], symbol_values(a, symbols)]).astype(np.uint8)
    return draw_row(values, base, extra_columns=2, answer=(1, len(a) + 4))


def division_answer(a: str, b: str, base: int) -> str:
    """Quotient and remainder of a by the digit b, digit by digit (linear in a's length)."""
    digits = digit_symbols(base)
    value = {ch: i for i, ch in enumerate(digits)}
    d, r = value[b], 0
    quotient = bytearray(len(a))  # a byte per digit (a list of one-character strings: 8 each)
    for i, ch in enumerate(a):
        q, r = divmod(base * r + value[ch], d)
        quotient[i] = ord(digits[q])
    return f"{canonical(quotient.decode('ascii'))} {digits[r]}"


def nonzero_digit_divisor(a: str, b: str, base: int) -> str | None:
    if len(b) != 1:
        return "the divisor must be one digit"
    return "division by zero" if b == digit_symbols(base)[0] else None


def generate_division(rng: np.random.Generator, n: int, m: int, base: int) -> tuple[str, str]:
    """An n-digit dividend and a divisor drawn from 1..base-1 (m is not used)."""
    return random_operand(rng, n, base), digit_symbols(base)[int(rng.integers(1, base))]


def division_steps(n: int, m: int, base: int) -> int:
    return n + 5


def hard_division(n: int, base: int) -> list[Instance]:
    """Every divisor under every dividend pattern of the multiplication hard set; from 2 digits on,
    every rule: each running remainder r < d meeting each digit (r x 9…9), and a dividend 10…0x
    leaving each remainder."""
    from dfst.tasks.hard import _patterns

    digits = digit_symbols(base)
    cases = []
    for value, d in enumerate(digits[1:], 1):
        cases += [Instance(a, d, f"{name}_by_{d}") for name, a in _patterns(n, base).items()]
        for r in range(value):
            if n >= 2:  # every rule: remainder r (the first digit, r < d) meets every digit x
                cases += [Instance(digits[r] + x + digits[-1] * (n - 2), d, f"r{r}_meets_{x}_by_{d}")
                          for x in digits]
                last = (r - pow(base, n - 1, value)) % value  # 10…0x leaves remainder r: every rem{r}
                ten = digits[1] + digits[0] * (n - 2) + digits[last]
                cases.append(Instance(ten, d, f"remainder_{r}_by_{d}"))
    return cases
