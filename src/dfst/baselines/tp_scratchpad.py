"""Turing-Program scratchpads for addition (Hou et al. 2024, section 3 and figure 2), as token ids.

A program is the prompt line followed by one line per step of a right-to-left adding machine, each
line a copy of the previous tape with a few local changes, then the answer line and EOS:

    $453+789=|45+78=c|4+7=e2|+=c42|1242#

A line is `A+B=R|`: the operand digits not yet consumed (most significant first) and the result
digits produced so far. One step drops the last digit of each operand (0 once an operand is used
up) and prepends the new result digit. The carry lives in that newest digit: the letters a..j stand
for 0..9 "with a carry out", as in the paper's token set {0-9, +, a-j, ...}; when the digit is copied
one line later it becomes a plain digit again. So the tape is the whole machine state and a line
differs from the one above only at the two operand ends and the front of R. Once both operands are
empty the answer line writes the final carry (if any) and R in plain digits.

Lines shrink by one token per step, so an n+n-digit program has about 1.5 n^2 tokens; generating a
line needs only the line above it, which is why a sliding window of a few lines suffices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfst.tasks.arith import canonical

DIGITS = "0123456789"
CARRY_DIGITS = "abcdefghij"      # digit d with a carry out of its column
PLUS, TIMES, EQUALS, LINE, BOS, EOS, PAD = "+", "*", "=", "|", "$", "#", "."
VOCAB = DIGITS + CARRY_DIGITS + PLUS + TIMES + EQUALS + LINE + BOS + EOS + PAD  # TIMES: tp_mult_scratchpad
TOKEN_ID = {ch: i for i, ch in enumerate(VOCAB)}
EOS_ID, PAD_ID, BOS_ID = TOKEN_ID[EOS], TOKEN_ID[PAD], TOKEN_ID[BOS]


def encode(text: str) -> list[int]:
    return [TOKEN_ID[ch] for ch in text]


def decode(ids: Sequence[int]) -> str:
    return "".join(VOCAB[int(i)] for i in ids)


def prompt_text(a: str, b: str) -> str:
    """What the model is given: BOS and the first tape line."""
    return f"{BOS}{a}{PLUS}{b}{EQUALS}{LINE}"


def addition_program(a: str, b: str, base: int = 10) -> str:
    """The full program for a + b (digit strings, most significant first), prompt included."""
    lines, result, carry = [prompt_text(a, b)], "", 0
    while a or b:
        total = _last(a) + _last(b) + carry
        a, b, carry = a[:-1], b[:-1], total // base
        result = _digit(total % base, carry) + _plain(result[:1]) + result[1:]
        lines.append(f"{a}{PLUS}{b}{EQUALS}{result}{LINE}")
    answer = ("1" if carry else "") + _plain(result[:1]) + result[1:]
    return "".join(lines) + answer + EOS


def _last(digits: str) -> int:
    return int(digits[-1]) if digits else 0


def _digit(value: int, carry: int) -> str:
    return CARRY_DIGITS[value] if carry else DIGITS[value]


def _plain(symbol: str) -> str:
    return DIGITS[CARRY_DIGITS.index(symbol)] if symbol and symbol in CARRY_DIGITS else symbol


def parse_answer(generated: str) -> str | None:
    """The answer of a generated continuation (after the prompt): the last line before EOS.

    None when there is no EOS or the answer line is not a non-empty run of plain digits.
    """
    if EOS not in generated:
        return None
    line = generated[: generated.index(EOS)].rsplit(LINE, 1)[-1]
    if not line or any(ch not in DIGITS for ch in line):
        return None
    return canonical(line)


def token_cap(a_digits: int, b_digits: int, program=addition_program, prompt=prompt_text) -> int:
    """Generated tokens after the prompt that a correct program for these lengths never exceeds
    (all-9 operands: every line is as long as it can be and the answer has its final carry)."""
    a, b = "9" * a_digits, "9" * b_digits
    return len(program(a, b)) - len(prompt(a, b))


def random_operand(rng: np.random.Generator, digits: int) -> str:
    """A `digits`-digit decimal operand; leading zeros allowed, as the grid tasks allow them."""
    return "".join(DIGITS[d] for d in rng.integers(0, 10, size=digits))


def loss_mask(program: str) -> list[bool]:
    """Per token: is it a training target? The prompt's random digits are not predictable."""
    start = len(program.split(LINE, 1)[0]) + 1      # first token after the prompt line
    return [i >= start for i in range(len(program))]
