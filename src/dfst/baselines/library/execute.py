"""Probabilistic execution: one step of the machine (machine.py's equations) and a run of many.

`prune=True` skips the terms of instructions whose weight is exactly zero on the whole batch: the
same values, much faster for compiled programs. Gradients are the same too unless a gradient must
flow into the counter through a line it never visits (then leave it off; see docs/research/library.md).
"""

from __future__ import annotations

import torch

from dfst.baselines.library.circuits import circuit_value
from dfst.baselines.library.isa import (
    CIRCUIT_OPS,
    NO_WRITE,
    OPCODE_INDEX,
    TABLE_OPS,
    UNARY_OPS,
    MachineConfig,
)
from dfst.baselines.library.machine import WORK_CAP, SoftProgram, SoftState, Wiring, build_wiring
from dfst.errors import DfstError


def _weight(f: torch.Tensor, op: str, prune: bool) -> torch.Tensor | None:
    """f's column for `op` (batch, 1), or None when pruning and it is zero everywhere."""
    w = f[:, OPCODE_INDEX[op], None]
    return None if prune and not bool(w.any()) else w


def _table_terms(f, u, v, wiring: Wiring, prune: bool) -> torch.Tensor:
    """sum_op f_op T_op[j, k, l] u_j v_k over the table, unary and circuit ops (eq. 7)."""
    batch, n = u.shape
    x = torch.zeros_like(u)
    pair = None
    for op in TABLE_OPS:  # T_op is one-hot on its last axis: scatter u_j v_k onto l = g(j, k)
        if (w := _weight(f, op, prune)) is not None:
            pair = (u[:, :, None] * v[:, None, :]).reshape(batch, n * n) if pair is None else pair
            index = wiring.table_index[op].expand(batch, -1)
            x = x + w * torch.zeros_like(u).scatter_add(1, index, pair)
    v_mass = v.sum(-1, keepdim=True)  # a unary T_op ignores v: sum_k v_k is 1 on a distribution
    for op in UNARY_OPS:
        if (w := _weight(f, op, prune)) is not None:
            moved = torch.zeros_like(u).scatter_add(1, wiring.unary[op].expand(batch, -1), u)
            x = x + w * moved * v_mass
    for op, arithmetic in CIRCUIT_OPS.items():
        if (w := _weight(f, op, prune)) is not None and wiring.bits is not None:
            x = x + w * circuit_value(arithmetic, u, v, wiring.bits)
    return x


def _written(program_value, f, u, v, following, state: SoftState, wiring: Wiring, prune: bool):
    """x, the value every register write of this step mixes in (eq. 5's c)."""
    x = _table_terms(f, u, v, wiring, prune)
    if (w := _weight(f, "const", prune)) is not None:
        x = x + w * program_value
    if (w := _weight(f, "read", prune)) is not None:  # eq. 2 at the cell u names
        x = x + w * torch.einsum("bc,bcn->bn", u @ wiring.value_to_cell, state.memory)
    for op in ("store", "call"):  # the return address: the next line, as a value
        if (w := _weight(f, op, prune)) is not None:
            x = x + w * (following @ wiring.line_to_value)
    for op in NO_WRITE:  # these write their operand u back to its own register
        if (w := _weight(f, op, prune)) is not None:
            x = x + w * u
    return x


def _next_counter(f, u, v, c, following, line_target, wiring: Wiring) -> torch.Tensor:
    """Eq. 6, with one term per jumping instruction and halt holding the counter still."""
    flag = u[:, 1:2]  # P(u == 1): the condition of jump and jumpr
    jumps = {"jump": (flag, line_target), "jumpr": (flag, v @ wiring.value_to_line),
             "call": (1.0, line_target), "ret": (1.0, u @ wiring.value_to_line)}
    halt = f[:, OPCODE_INDEX["halt"], None]
    stay = 1 - halt
    moved = torch.zeros_like(c)
    for op, (p, line) in jumps.items():
        w = f[:, OPCODE_INDEX[op], None]
        stay = stay - w * p
        moved = moved + w * p * line
    return halt * c + stay * following + moved


def _write_memory(f, u, v, memory, wiring: Wiring, prune: bool) -> torch.Tensor:
    """Eqs. 3-4: write v at the cell u names, with probability w = f_write."""
    if (w := _weight(f, "write", prune)) is None:
        return memory
    address = (u @ wiring.value_to_cell)[..., None]                # (B, C, 1)
    written = (1 - address) * memory + address * v[:, None, :]     # eq. 3
    return (1 - w[..., None]) * memory + w[..., None] * written    # eq. 4


def step(program: SoftProgram, state: SoftState, wiring: Wiring, prune: bool = False) -> SoftState:
    """S_t -> S_t+1: every line at once, weighted by the counter."""
    c = state.counter                                              # (B, L)
    f = c @ program.ops                                            # (B, |A|)
    a, b, o = c @ program.a, c @ program.b, c @ program.out        # (B, R) each
    u = torch.einsum("br,brn->bn", a, state.registers)             # (B, n)
    v = torch.einsum("br,brn->bn", b, state.registers)             # (B, n)
    following = c.roll(1, -1)                                      # inc(c), line L-1 wraps to 0
    x = _written(c @ program.value, f, u, v, following, state, wiring, prune)
    registers = (1 - o)[..., None] * state.registers + o[..., None] * x[:, None, :]   # eq. 5
    memory = _write_memory(f, u, v, state.memory, wiring, prune)
    counter = _next_counter(f, u, v, c, following, c @ program.target, wiring)        # eq. 6
    halted = state.halted + (1 - state.halted) * f[:, OPCODE_INDEX["halt"]]
    return SoftState(memory, registers, counter, halted)


def estimate_work(config: MachineConfig, lines: int, batch: int, steps: int,
                  table_ops: int = len(TABLE_OPS)) -> float:
    """Multiply-adds of a run: the table ops' u (x) v dominate, then R, M and c. Without pruning every
    table op is paid for; with it, only the `table_ops` the program uses."""
    n = config.base
    per_step = n * n * table_ops + n * (4 * config.registers + 3 * config.cells) + 4 * lines * n
    return float(steps) * batch * per_step


def check_work(config: MachineConfig, lines: int, batch: int, steps: int,
               table_ops: int = len(TABLE_OPS)) -> None:
    """Refuse, before any work, a run above WORK_CAP multiply-adds."""
    work = estimate_work(config, lines, batch, steps, table_ops)
    if work > WORK_CAP:
        raise DfstError(f"this soft run would cost about {work:.2g} multiply-adds (cap {WORK_CAP:.0g}): "
                        "use a smaller base, batch, depth or step count")


def run_soft(program: SoftProgram, state: SoftState, config: MachineConfig, steps: int | None = None,
             prune: bool = False) -> SoftState:
    """`steps` steps, or (steps=None) until every h is 1 or config.max_steps steps have run."""
    lines = program.ops.shape[0]
    check_work(config, lines, state.registers.shape[0], steps or config.max_steps)
    wiring = build_wiring(config, lines)
    for _ in range(steps or config.max_steps):
        if steps is None and bool((state.halted >= 1).all()):
            break
        state = step(program, state, wiring, prune)
    return state


def initial_soft_state(config: MachineConfig, lines: int, registers: torch.Tensor,
                       memory: torch.Tensor) -> SoftState:
    """A state from value distributions: registers (B, R, n), memory (B, C, n); c at line 0, h = 0."""
    batch = registers.shape[0]
    counter = torch.zeros(batch, lines, dtype=registers.dtype)
    counter[:, 0] = 1
    return SoftState(memory, registers, counter, torch.zeros(batch, dtype=registers.dtype))


def one_hot_state(config: MachineConfig, lines: int, registers: torch.Tensor,
                  memory: torch.Tensor) -> SoftState:
    """A state from integer values: registers (B, R), memory (B, C), each taken mod base."""
    dtype = torch.get_default_dtype()
    regs = torch.nn.functional.one_hot(registers % config.base, config.base).to(dtype)
    mem = torch.nn.functional.one_hot(memory % config.base, config.base).to(dtype)
    return initial_soft_state(config, lines, regs, mem)
