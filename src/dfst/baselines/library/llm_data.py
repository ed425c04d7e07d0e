"""Experiment (c)'s data: one-step mod-n arithmetic sentences ("add 3 and 4") and a word-level
tokenizer built locally (no pretrained tokenizer can be downloaded; seed 002 used LLaMA 3's).

Each sentence names an operation (add, sub, mul: the library's lookup-table programs) and two
operands in one of several templates, some of which put the second operand first ("subtract 4 from
9" is 9 - 4), so that the network must parse, not copy positions. Only the answer is supervised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OPERATIONS = ("add", "sub", "mul")
# (template, operation); {a} and {b} are the operands of `a op b`.
TEMPLATES = (
    ("add {a} and {b}", "add"), ("what is {a} plus {b}", "add"), ("the sum of {a} and {b}", "add"),
    ("subtract {b} from {a}", "sub"), ("what is {a} minus {b}", "sub"), ("take {b} away from {a}", "sub"),
    ("multiply {a} by {b}", "mul"), ("what is {a} times {b}", "mul"), ("the product of {a} and {b}", "mul"),
)
PAD = "<pad>"


@dataclass(frozen=True)
class Problem:
    """One sentence and what it asks: operation index, operands, the answer mod `base`."""

    text: str
    op: int
    a: int
    b: int
    answer: int


def answer_of(op: str, a: int, b: int, base: int) -> int:
    """Python's own arithmetic, mod base (independent of the machine's tables)."""
    return {"add": a + b, "sub": a - b, "mul": a * b}[op] % base


def make_problems(count: int, base: int, seed: int) -> list[Problem]:
    """`count` distinct (template, a, b) sentences, drawn without replacement, deterministic in seed."""
    total = len(TEMPLATES) * base * base
    if not 1 <= count <= total:
        raise ValueError(f"count must be 1..{total}, got {count}")
    rng = np.random.default_rng(seed)
    problems = []
    for index in rng.choice(total, size=count, replace=False).tolist():
        template, rest = divmod(index, base * base)
        a, b = divmod(rest, base)
        text, op = TEMPLATES[template]
        problems.append(Problem(text.format(a=a, b=b), OPERATIONS.index(op), a, b,
                                answer_of(op, a, b, base)))
    return problems


class WordTokenizer:
    """Whitespace words to ids: the templates' words and the numbers 0..base-1, each one token."""

    def __init__(self, base: int):
        words = sorted({w for text, _ in TEMPLATES for w in text.split() if not w.startswith("{")})
        self.vocab = [PAD, *words, *(str(i) for i in range(base))]
        self.ids = {w: i for i, w in enumerate(self.vocab)}

    def encode(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        """Right-padded ids and each sentence's last real position."""
        rows = [[self.ids[w] for w in text.split()] for text in texts]
        width = max(len(r) for r in rows)
        return [r + [self.ids[PAD]] * (width - len(r)) for r in rows], [len(r) - 1 for r in rows]
