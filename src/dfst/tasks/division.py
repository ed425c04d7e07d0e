"""Long division by one digit (task div10x1): quotient and remainder of an n-digit number.

The agent divides as on paper, a column at a time, but it keeps nothing of the divisor or the running
remainder in its state: each column's value 10r + x (r, the remainder so far, in the cell left of
the digit x) is divided by repeated subtraction of d, one unit at a time, with the units counted on
the grid. A state that remembered d would be followed, for the whole run, by symbols that only d
decides, and no PTO would show that those states, one per divisor, act alike: a DFST trained on the
divisor-in-state expert (65 states) never generalised (docs/research/training.md section 12).

    row 1   the working value: a from column 2; a column leaves its remainder in its digit's cell,
            which the next column borrows from
    row 2   the quotient: a counter per column, its digit once the column is done; the answer row
    row 3   P: the divisor's units, under the current column (d at (3, 2) to start)
    row 4   Q: the units taken from P in the subtraction under way

    100 ÷ 7 (466 steps):
               row 1  . . 1 0 0 . . .    ->   . . 0 0 2 . . .
               row 2  . . . . . . . .         . . 0 1 4 . 2 .    answer "14 2" at (2, n + 3)
               row 3  . . 7 . . . . .         . . 0 0 0 7 . .
               row 4  . . . . . . . .         . . 0 0 0 . . .

Per unit: take one from P (row 3), add it to Q (row 4), take one from the value (x, borrowing 10
from r when x is 0). When P is empty, count one subtraction on row 2 and move Q back into P. When
the value runs out (x and r both 0), undo the subtraction under way (Q back into P and into x),
move P one column right, write the counter as a digit (a blank counts 0) and go on with the next
column; past a's last digit the remainder, left in that digit's cell, is written one blank past the
quotient. 54 states and 322 rules in base 10; at most 827 steps a column (89 ÷ 9: nine subtractions
of nine units and an undo of eight).
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.tasks.arith import canonical, digit_symbols
from dfst.tasks.base import BLANK, Instance, alphabet_for, random_operand
from dfst.tasks.oneline import symbol_values

ROWS = 6  # the four working rows and a blank margin above and below
FIRST_COLUMN = 2  # a's first digit; its remainder cell (column 1) starts blank
STEPS_PER_COLUMN = 827  # the most a column takes (89 ÷ 9): tests/test_division.py measures it
END_STEPS = 6  # past the last column: find the end, carry the remainder down and right


def build_divider_agent(base: int) -> Transducer:
    if base != 10:
        raise ValueError(f"div10x1's agent counts in base 10, not {base}")
    rules = [r for r in divider_rules() if (r.state, r.read) not in NEVER_READ]
    states = [*dict.fromkeys(r.state for r in rules), "halt"]
    return make_transducer(states, alphabet_for(base), rules, initial="next_digit", final="halt",
                           blank=BLANK, name="div10x1")


# What the rules below would read but no grid shows (a rule for it could never be tested, and a
# DFST is free there): a column's counter is blank until it counts, then 1 to 9, and 0 only once
# written as the digit of a finished column; P (row 3) and Q (row 4) are digits once written, P at
# least 1 while a unit is being taken; a remainder (r, and x when the column ends) is below 9.
# Found by running every instance of up to 3 digits (tests/test_division.py checks it on every
# instance of up to 2 digits and the 3-digit hard set: these and only these are never read).
NEVER_READ = frozenset({
    *(("down_to_p", s) for s in "0123456789"), ("up_to_x", "0"), ("back_to_p", "0"), ("count", "0"),
    ("undo_down", "0"), ("undo_up", "0"), ("write_digit", "0"),  # the counter
    ("take_unit", BLANK), ("shift_p", BLANK), ("shift_p_right", "0"), ("undo_past_p", "0"),
    ("undo_past_p", BLANK), ("undo_p", "0"), ("refill_q", BLANK), ("undo_q", "9"),  # P and Q
    ("take_x", BLANK), ("borrow", "9"), ("to_next", "9"), ("undo_x", "8"),  # the value
})

_DIGITS = alphabet_for(10)[:10]
_ANY = (*_DIGITS, BLANK)
_BELOW_NINE = (*_DIGITS[:9], BLANK)  # what a counter reads before it adds one (a blank counts 0)


def divider_rules() -> list[Rule]:
    """The whole rule table, before the rules no grid reaches (NEVER_READ) are dropped."""
    rules: list[Rule] = []
    _take_unit_rules(rules)
    _undo_rules(rules)
    _count_rules(rules)
    _column_end_rules(rules)
    _remainder_rules(rules)
    return rules


def _value(symbol: str) -> int:
    return 0 if symbol == BLANK else int(symbol)


def _rule(rules: list[Rule], state: str, read: str, nxt: str, write: str, move: str) -> None:
    rules.append(Rule(state, read, nxt, write, move))


def _pass(rules: list[Rule], state: str, nxt: str, move: str, reads=_ANY) -> None:
    """Step over the cell, leaving it as it is."""
    for s in reads:
        _rule(rules, state, s, nxt, s, move)


def _take_unit_rules(rules: list[Rule]) -> None:
    """One unit at a time from P to Q and off the value (borrowing ten from r when x is 0)."""
    for s in _DIGITS:
        _rule(rules, "next_digit", s, "down_to_p", s, "D")
    _rule(rules, "next_digit", BLANK, "end", BLANK, "L")
    _pass(rules, "down_to_p", "take_unit", "D")
    for s in _ANY:  # on P: a unit left to take, or the subtraction is complete
        _rule(rules, "take_unit", s, "up_to_x" if _value(s) else "count", s, "U")
    _pass(rules, "up_to_x", "take_x", "U")
    for s in _ANY:  # on x: take one, or borrow from r
        if _value(s):
            _rule(rules, "take_x", s, "back_to_p", _DIGITS[_value(s) - 1], "D")
        else:
            _rule(rules, "take_x", s, "borrow", s, "L")
    for s in _ANY:  # on r: lend ten, or the value is spent
        if _value(s):
            _rule(rules, "borrow", s, "nine", _DIGITS[_value(s) - 1], "R")
        else:
            _rule(rules, "borrow", s, "undo", s, "R")
    _rule(rules, "nine", _DIGITS[0], "back_to_p", _DIGITS[9], "D")
    _pass(rules, "back_to_p", "take_p", "D")
    for s in _DIGITS[1:]:
        _rule(rules, "take_p", s, "give_q", _DIGITS[_value(s) - 1], "D")
    for s in _BELOW_NINE:
        _rule(rules, "give_q", s, "take_unit", _DIGITS[_value(s) + 1], "U")


def _undo_rules(rules: list[Rule]) -> None:
    """The value ran out: every unit in Q goes back to P and to x; then the column ends."""
    _rule(rules, "undo", _DIGITS[0], "undo_down", _DIGITS[0], "D")
    _pass(rules, "undo_down", "undo_past_p", "D")
    _pass(rules, "undo_past_p", "undo_q", "D")
    for s in _ANY:
        _rule(rules, "undo_q", s, "undo_p" if _value(s) else "shift_p",
              _DIGITS[_value(s) - 1] if _value(s) else s, "U")
    for s in _DIGITS[:9]:
        _rule(rules, "undo_p", s, "undo_up", _DIGITS[_value(s) + 1], "U")
    _pass(rules, "undo_up", "undo_x", "U")
    for s in _DIGITS[:9]:
        _rule(rules, "undo_x", s, "undo_down", _DIGITS[_value(s) + 1], "D")


def _count_rules(rules: list[Rule]) -> None:
    """P is empty, so a subtraction is complete: count it, and Q's units go back to P."""
    for s in _BELOW_NINE:
        _rule(rules, "count", s, "refill_down", _DIGITS[_value(s) + 1], "D")
    _rule(rules, "refill_down", _DIGITS[0], "refill_q", _DIGITS[0], "D")
    for s in _ANY:
        _rule(rules, "refill_q", s, "refill_p" if _value(s) else "take_unit",
              _DIGITS[_value(s) - 1] if _value(s) else s, "U")
    for s in _DIGITS[:9]:
        _rule(rules, "refill_p", s, "refill_q", _DIGITS[_value(s) + 1], "D")


def _column_end_rules(rules: list[Rule]) -> None:
    """P's units one column right, the count written as the quotient digit, on to the next digit."""
    for s in _ANY:
        if _value(s):
            _rule(rules, "shift_p", s, "shift_p_right", _DIGITS[_value(s) - 1], "R")
        else:
            _rule(rules, "shift_p", s, "write_digit", s, "U")
    for s in _BELOW_NINE:
        _rule(rules, "shift_p_right", s, "shift_p", _DIGITS[_value(s) + 1], "L")
    for s in _ANY:
        _rule(rules, "write_digit", s, "to_next", _DIGITS[_value(s)], "U")
    _pass(rules, "to_next", "next_digit", "R", _DIGITS)


def _remainder_rules(rules: list[Rule]) -> None:
    """The remainder r (last digit's cell) down to row 2, past the quotient and a blank, then stop."""
    for r in range(9):
        _rule(rules, "end", _DIGITS[r], f"rem{r}_down", _DIGITS[r], "D")
        _pass(rules, f"rem{r}_down", f"rem{r}_gap", "R", _DIGITS)
        _rule(rules, f"rem{r}_gap", BLANK, f"rem{r}", BLANK, "R")
        _rule(rules, f"rem{r}", BLANK, "halt", _DIGITS[r], "S")


def draw_division(a: str, b: str, base: int) -> Layout:
    symbols = alphabet_for(base)
    cells = np.full((ROWS, len(a) + 5), base, dtype=np.uint8)
    cells[1, FIRST_COLUMN: FIRST_COLUMN + len(a)] = symbol_values(a, symbols)
    cells[3, FIRST_COLUMN] = symbol_values(b, symbols)[0]
    return Layout(cells, head=(1, FIRST_COLUMN), answer=(2, len(a) + 3))


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
    return STEPS_PER_COLUMN * n + END_STEPS


def hard_division(n: int, base: int) -> list[Instance]:
    """Every divisor under every dividend pattern of the multiplication hard set; from 2 digits on,
    each remainder r < d meeting each digit x (every column value 10r + x, so every count, borrow
    and undo) in the second column (r x 9…9: then a run of the largest values) and in the last
    (0…0 r x: every remainder under every last quotient digit)."""
    from dfst.tasks.hard import _patterns

    digits = digit_symbols(base)
    cases = []  # at 2 digits the two columns are one: Task.hard_instances drops the repeats
    for value, d in enumerate(digits[1:], 1):
        cases += [Instance(a, d, f"{name}_by_{d}") for name, a in _patterns(n, base).items()]
        for r in digits[:value] if n >= 2 else ():
            for x in digits:
                cases += [Instance(r + x + digits[-1] * (n - 2), d, f"r{r}_meets_{x}_by_{d}"),
                          Instance(digits[0] * (n - 2) + r + x, d, f"r{r}_meets_{x}_last_by_{d}")]
    return cases
