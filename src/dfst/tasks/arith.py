"""Digit strings in a base: validation and the exact answers from Python's own arbitrary precision.

Operands are strings of digits, most significant first, so that a 10^6-digit operand never has to
become a Python int. Exact answers use Python's int, except for long base-10 operands, where the
decimal module (libmpdec) converts and multiplies without the quadratic cost of int <-> str.
"""

from __future__ import annotations

import contextlib
import decimal
import sys

import numpy as np

from dfst.errors import DfstError

DIGIT_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
DECIMAL_FROM = 4000  # total operand digits from which base 10 uses the decimal module (sub-quadratic)


def digit_symbols(base: int) -> tuple[str, ...]:
    """The symbol names of the digits 0..base-1."""
    if not 2 <= base <= len(DIGIT_CHARS):
        raise DfstError(f"base {base} is not supported (2 to {len(DIGIT_CHARS)})")
    return tuple(DIGIT_CHARS[:base])


def check_operand(text: str, base: int, label: str = "operand") -> str:
    """Return `text` if it is a non-empty digit string in `base`, else raise a one-line DfstError."""
    if text == "":
        raise DfstError(f"{label} is empty")
    if text.startswith("-"):
        raise DfstError(f"{label} {_short(text)} is negative: dfst works on non-negative integers")
    allowed = set(digit_symbols(base))
    bad = next((ch for ch in text if ch not in allowed), None)
    if bad is not None:
        raise DfstError(f"{label} {_short(text)} has {bad!r}, which is not a digit in base {base}")
    return text


def _short(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:20] + "...")


def canonical(text: str) -> str:
    """Strip leading zeros, keeping a single 0."""
    return text.lstrip("0") or "0"


OPERATIONS = ("add", "sub", "mult")


def compare_numbers(a: str, b: str) -> int:
    """-1, 0 or 1 as the number a is less than, equal to or greater than b (same base, any length)."""
    a, b = canonical(a), canonical(b)
    key_a, key_b = (len(a), a), (len(b), b)
    return (key_a > key_b) - (key_a < key_b)


def exact_answer(operation: str, a: str, b: str, base: int) -> str:
    """a+b, a-b (a >= b) or a*b in `base`, as a canonical digit string."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown operation {operation!r}")
    if base == 10 and len(a) + len(b) >= DECIMAL_FROM:
        return _decimal_answer(operation, a, b)
    with _unlimited_int_strings():
        x, y = int(a, base), int(b, base)
        return _to_digits({"add": x + y, "sub": x - y, "mult": x * y}[operation], base)


def _decimal_answer(operation: str, a: str, b: str) -> str:
    ctx = decimal.Context(prec=len(a) + len(b) + 2, Emax=decimal.MAX_EMAX)
    x, y = decimal.Decimal(a), decimal.Decimal(b)
    result = {"add": ctx.add, "sub": ctx.subtract, "mult": ctx.multiply}[operation](x, y)
    return canonical(format(result, "f"))


@contextlib.contextmanager
def _unlimited_int_strings():
    """Python caps int<->str conversion in non-power-of-two bases at 4300 digits; lift it here."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def _to_digits(value: int, base: int) -> str:
    formats = {2: "b", 8: "o", 10: "d", 16: "x"}
    if base in formats:
        return format(value, formats[base])
    chars = DIGIT_CHARS
    out = []
    while value:
        value, r = divmod(value, base)
        out.append(chars[r])
    return "".join(reversed(out)) or "0"


_CHAR_VALUE = np.full(256, 255, dtype=np.uint8)
_CHAR_VALUE[np.frombuffer(DIGIT_CHARS.encode(), dtype=np.uint8)] = np.arange(len(DIGIT_CHARS))


def text_to_digits(text: str) -> np.ndarray:
    """Digit values (uint8) of a validated digit string, vectorised for million-digit operands."""
    return _CHAR_VALUE[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]


def digits_to_text(digits: np.ndarray) -> str:
    """Inverse of `text_to_digits`."""
    table = np.frombuffer(DIGIT_CHARS.encode(), dtype=np.uint8)
    return table[np.asarray(digits, dtype=np.intp)].tobytes().decode("ascii")
