"""How a task's answer is read off the final grid: the answer row, up to and including the answer cell.

Each readout maps that line of symbol indices (digits are 0..base-1, the blank is `base`, other
symbols follow it) to the answer's text, or None where the line holds no answer:

    number              the run of digits ending at the answer cell, leading zeros dropped (add2, sub10)
    string              the same run, exactly (reverse2, sort2: leading zeros are part of the answer)
    symbol              the one symbol at the answer cell (compare2's <, =, >; dyck's y/n; parity2's bit)
    quotient_remainder  a digit at the answer cell, a blank, then a number ending there: "q r" (div10x1)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dfst.tasks.arith import canonical, digits_to_text


def _digit_run(line: np.ndarray, base: int) -> np.ndarray:
    """The digits at the end of `line`, up to the last non-digit."""
    not_digit = np.flatnonzero(line[::-1] >= base)
    length = int(not_digit[0]) if not_digit.size else len(line)
    return line[len(line) - length:]


def read_number(line: np.ndarray, base: int, alphabet: tuple[str, ...]) -> str | None:
    digits = _digit_run(line, base)
    return canonical(digits_to_text(digits)) if digits.size else None


def read_string(line: np.ndarray, base: int, alphabet: tuple[str, ...]) -> str | None:
    digits = _digit_run(line, base)
    return "".join(alphabet[int(s)] for s in digits) if digits.size else None


def read_symbol(line: np.ndarray, base: int, alphabet: tuple[str, ...]) -> str | None:
    if not len(line) or int(line[-1]) == base:
        return None
    return alphabet[int(line[-1])]


def read_quotient_remainder(line: np.ndarray, base: int, alphabet: tuple[str, ...]) -> str | None:
    if len(line) < 3 or int(line[-1]) >= base or int(line[-2]) != base:
        return None
    quotient = read_number(line[:-2], base, alphabet)
    return None if quotient is None else f"{quotient} {alphabet[int(line[-1])]}"


READOUTS: dict[str, Callable[[np.ndarray, int, tuple[str, ...]], str | None]] = {
    "number": read_number, "string": read_string, "symbol": read_symbol,
    "quotient_remainder": read_quotient_remainder,
}
