"""n x 1 Turing Programs against Python integers: every answer, every intermediate tape, local edits
between lines, and the mult10x1 instances the transformer is scored on."""

from __future__ import annotations

import numpy as np
import pytest

from dfst.baselines import tp_mult_scratchpad as tpm
from dfst.baselines import tp_scratchpad as tp


def random_pairs(count: int, seed: int = 1, longest: int = 40):
    """n-digit a (leading zeros allowed) and a one-digit b, 0 included."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield tp.random_operand(rng, int(rng.integers(1, longest + 1))), str(int(rng.integers(0, 10)))


EDGES = [("9" * 30, "9"), ("0", "0"), ("1", "0"), ("000", "7"), ("5", "2"), ("125", "8"), ("1" * 12, "9")]


def step_lines(a: str, b: str) -> list[str]:
    """The prompt line and the step lines, without BOS and the answer line."""
    return tpm.multiplication_program(a, b)[1:].split(tp.LINE)[:-1]


def test_program_answer_is_the_integer_product():
    for a, b in [*random_pairs(400), *EDGES]:
        program = tpm.multiplication_program(a, b)
        assert tp.decode(tp.encode(program)) == program
        continuation = program[len(tpm.prompt_text(a, b)):]
        assert tp.parse_answer(continuation) == str(int(a) * int(b))
        assert len(continuation) <= tp.token_cap(len(a), 1, tpm.multiplication_program, tpm.prompt_text)


def test_each_line_is_one_step_of_the_grade_school_algorithm():
    """Line k: a without its last k digits, b, the carry out of the k low digits, the k low digits."""
    for a, b in [*random_pairs(150, seed=2), *EDGES]:
        lines = step_lines(a, b)
        assert len(lines) == len(a) + 1 and lines[0] == f"{a}{tp.TIMES}{b}{tp.EQUALS}"
        for k, line in enumerate(lines[1:], start=1):
            low = int(a[-k:]) * int(b)               # the product of the k digits consumed so far
            operands, tape = line.split(tp.EQUALS)
            assert operands == f"{a[:len(a) - k]}{tp.TIMES}{b}"
            carry, result = tape[0], tape[1:]
            assert carry == tp.CARRY_DIGITS[low // 10 ** k] and low // 10 ** k <= 8
            assert len(result) == k and int(result) == low % 10 ** k


def edit_distance(x: str, y: str) -> int:
    """Levenshtein distance over tokens (insertions, deletions, substitutions)."""
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, start=1):
        diag, row[0] = row[0], i
        for j, cy in enumerate(y, start=1):
            diag, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diag + (cx != cy))
    return row[-1]


def test_consecutive_lines_differ_only_locally():
    """One step = drop a's last digit, rewrite the carry, insert one result digit; the rest is copied."""
    for a, b in [*random_pairs(60, seed=3, longest=25), *EDGES]:
        lines = step_lines(a, b)
        for prev, line in zip(lines[1:], lines[2:]):
            assert edit_distance(prev, line) <= 3
            kept_a, result = len(line.split(tp.TIMES)[0]), line.split(tp.EQUALS)[1][2:]
            assert line[:kept_a] == prev[:kept_a] and prev.endswith(result)  # copied ends
        assert edit_distance(lines[0], lines[1]) <= 3 and len(lines[0]) + 1 == len(lines[1])


def test_multiplier_must_be_one_digit():
    with pytest.raises(ValueError, match="one-digit"):
        tpm.multiplication_program("12", "34")


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_mult10x1_instances_are_n_by_one_and_scored_as_products(n):
    task = tpm.MULT10X1
    hard, rand = task.hard_instances(n), task.random_instances(n, 20, seed=n)
    assert hard and len({(x.a, x.b) for x in hard}) == len(hard)
    assert all(len(x.a) == n and len(x.b) == 1 for x in rand)
    # the hard set holds every operand of one or two digits at every length too (hard_by_digit)
    assert all(len(x.a) in (n, 1, 2) and len(x.b) == 1 for x in hard)
    assert any(x.b == "9" and set(x.a) == {"9"} for x in hard)    # the longest carry chain
    assert all(task.expected(x) == str(int(x.a) * int(x.b)) for x in hard + rand)
    assert task.name == "mult10x1" and task.operation == "mult" and task.base == 10
