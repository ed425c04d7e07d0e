"""The differentiable register machine of seed 002 (Bunel et al. 2016 with call/return), batched.

State S = (M, R, c, h) (eq. 1): memory M (batch, cells, base), registers R (batch, registers, base),
instruction counter c (batch, lines), halting probability h (batch,). A program is a distribution
per line over instructions, operand registers a and b, output register o, an immediate value and a
jump target (`SoftProgram`; one-hot when compiled). One step runs every line at once, weighted by c:

    f = c F, a = c A, b = c B, o = c O           the instruction and its arguments, in superposition
    u_j = R_ij a_i, v_j = R_ij b_i               operand values (the register read below eq. 5)
    x = sum_op f_op T_op(u, v) + special cases   the lookup of eq. 7 (const, read, store/call)
    R <- (1 - o) * R + o (x) x                   eq. 5: every instruction writes a register
    M <- (1 - w) M + w ((1 - addr) * M + addr (x) v)     eqs. 3-4, w = f_write, addr = cell of u
    c <- h c + (1 - h - sum_J f_J) inc(c) + sum_J f_J ((1 - p_J) inc(c) + p_J l_J)   eq. 6
    h <- h + (1 - h) f_halt

where J ranges over jump (p = P(u = 1), l = the line's target), jumpr (p = P(u = 1), l = line v),
call (p = 1, l = target; it writes inc(c) as a value: the seed's store) and ret (p = 1, l = line u).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from dfst.baselines.library.circuits import bit_table
from dfst.baselines.library.isa import (
    OPCODE_INDEX,
    OPCODES,
    TABLE_OPS,
    UNARY_OPS,
    Instr,
    MachineConfig,
    check_program,
)

WORK_CAP = 3e11  # multiply-adds one soft run may cost (about a few CPU minutes)


@dataclass
class SoftProgram:
    """Per line: ops (lines, |A|); a, b, out (lines, registers); value (lines, base); target (lines,
    lines)."""

    ops: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    out: torch.Tensor
    value: torch.Tensor
    target: torch.Tensor

    def replace(self, **fields: torch.Tensor) -> SoftProgram:
        """A copy with some fields replaced (e.g. a caller's rows made soft and trainable)."""
        return dataclasses.replace(self, **fields)


@dataclass
class SoftState:
    """memory (batch, cells, base), registers (batch, registers, base), counter (batch, lines),
    halted (batch,)."""

    memory: torch.Tensor
    registers: torch.Tensor
    counter: torch.Tensor
    halted: torch.Tensor


def _one_hot(indices: list[int], size: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(torch.tensor(indices), size).to(torch.get_default_dtype())


def compile_program(program: list[Instr], config: MachineConfig) -> SoftProgram:
    """The program's exact parameters: every distribution one-hot."""
    check_program(program, config)
    lines = len(program)
    return SoftProgram(
        ops=_one_hot([OPCODE_INDEX[i.op] for i in program], len(OPCODES)),
        a=_one_hot([i.a for i in program], config.registers),
        b=_one_hot([i.b for i in program], config.registers),
        out=_one_hot([i.out for i in program], config.registers),
        value=_one_hot([i.value for i in program], config.base),
        target=_one_hot([i.target for i in program], lines))


@dataclass
class Wiring:
    """Fixed 0/1 matrices: a value as a line, a line as a value, a value as a memory cell, the tables."""

    value_to_line: torch.Tensor  # (base, lines): value x -> line x mod lines
    line_to_value: torch.Tensor  # (lines, base): line i -> value i mod base
    value_to_cell: torch.Tensor  # (base, cells): value x -> cell x mod cells
    table_index: dict[str, torch.Tensor]  # op -> (base * base,) index of g(u, v): T's one-hot axis
    unary: dict[str, torch.Tensor]  # op -> (base,) index of g(u)
    bits: torch.Tensor | None  # (base, bits) for circuits, None if base is not a power of two


def _modulo_matrix(rows: int, cols: int) -> torch.Tensor:
    return _one_hot([i % cols for i in range(rows)], cols)


def build_wiring(config: MachineConfig, lines: int) -> Wiring:
    """The matrices one run needs, built once."""
    n = config.base
    pairs = [(u, v) for u in range(n) for v in range(n)]
    return Wiring(
        value_to_line=_modulo_matrix(n, lines), line_to_value=_modulo_matrix(lines, n),
        value_to_cell=_modulo_matrix(n, config.cells),
        table_index={op: torch.tensor([g(u, v, n) for u, v in pairs]) for op, g in TABLE_OPS.items()},
        unary={op: torch.tensor([g(u, n) for u in range(n)]) for op, g in UNARY_OPS.items()},
        bits=None if n & (n - 1) else bit_table(n))


def dense_table(config: MachineConfig) -> torch.Tensor:
    """The seed's T (|table ops| + |unary ops|, base, base, base), for checking eq. 7 on small bases."""
    n = config.base
    table = torch.zeros(len(TABLE_OPS) + len(UNARY_OPS), n, n, n)
    for k, op in enumerate(list(TABLE_OPS) + list(UNARY_OPS)):
        for u in range(n):
            for v in range(n):
                g = TABLE_OPS[op](u, v, n) if op in TABLE_OPS else UNARY_OPS[op](u, n)
                table[k, u, v, g] = 1
    return table
