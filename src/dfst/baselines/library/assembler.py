"""The assembly text of docs/research/library.md, parsed into `Instr` lines; every problem reported at once.

    # a comment             label:            add r0 r1 r2      const 7 r3     jump r6 done

One instruction per line; `label:` names the next instruction's line. Operands follow isa.SHAPES:
registers are r0, r1, ...; an immediate value is an integer or a label (its line number).
"""

from __future__ import annotations

import re

from dfst.baselines.library.isa import NO_WRITE, SHAPES, Instr
from dfst.errors import DfstError

LABEL = re.compile(r"^([A-Za-z_]\w*):$")
REGISTER = re.compile(r"^r(\d+)$")


def _tokens(text: str) -> list[tuple[int, list[str]]]:
    """(source line number, words) of each non-empty line, comments removed."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if words:
            lines.append((number, words))
    return lines


def _labels(lines: list[tuple[int, list[str]]], problems: list[str]) -> dict[str, int]:
    """Each label's instruction index (labels take no line of their own)."""
    labels: dict[str, int] = {}
    index = 0
    for number, words in lines:
        match = LABEL.match(words[0]) if len(words) == 1 else None
        if match is None:
            index += 1
        elif match[1] in labels:
            problems.append(f"line {number}: label {match[1]!r} defined twice")
        else:
            labels[match[1]] = index
    return labels


def _operand(kind: str, word: str, labels: dict[str, int], registers: int) -> int:
    """The integer an operand word stands for; ValueError with the reason if it is not one."""
    if kind == "r":
        match = REGISTER.match(word)
        if match is None or int(match[1]) >= registers:
            raise ValueError(f"{word!r} is not a register r0..r{registers - 1}")
        return int(match[1])
    if word in labels:
        return labels[word]
    if kind == "L":
        raise ValueError(f"unknown label {word!r}")
    try:
        return int(word)
    except ValueError:
        raise ValueError(f"{word!r} is neither an integer nor a label") from None


def _instruction(words: list[str], labels: dict[str, int], registers: int) -> Instr:
    """One line's Instr; ValueError if the opcode or an operand is wrong."""
    op, args = words[0], words[1:]
    if op not in SHAPES:
        raise ValueError(f"unknown instruction {op!r}")
    kinds = SHAPES[op].split()
    if len(args) != len(kinds):
        raise ValueError(f"{op} takes {len(kinds)} operand(s) ({SHAPES[op] or 'none'}), got {len(args)}")
    values = [_operand(k, w, labels, registers) for k, w in zip(kinds, args)]
    return _build(op, values)


def _build(op: str, values: list[int]) -> Instr:
    """Place the operand values in the Instr fields their shape names."""
    shape = SHAPES[op]
    if shape == "r r r":
        return Instr(op, a=values[0], b=values[1], out=values[2])
    if op in ("const",):
        return Instr(op, value=values[0], out=values[1])
    if op == "call":
        return Instr(op, target=values[0], out=values[1])
    if op == "jump":
        return Instr(op, a=values[0], out=values[0], target=values[1])
    if op == "store":
        return Instr(op, out=values[0])
    if op in NO_WRITE:  # write, jumpr, ret, halt: the register write is a no-op (out = a)
        return Instr(op, a=values[0] if values else 0, b=values[1] if len(values) > 1 else 0,
                     out=values[0] if values else 0)
    return Instr(op, a=values[0], out=values[1])  # unary ops and read


def assemble(text: str, registers: int) -> list[Instr]:
    """The program's lines; a DfstError listing every problem if the text has any."""
    problems: list[str] = []
    lines = _tokens(text)
    labels = _labels(lines, problems)
    program = []
    for number, words in lines:
        if len(words) == 1 and LABEL.match(words[0]):
            continue
        try:
            program.append(_instruction(words, labels, registers))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
    if not program and not problems:
        problems.append("the program has no instruction")
    if problems:
        raise DfstError("assembly: " + "; ".join(problems))
    return program
