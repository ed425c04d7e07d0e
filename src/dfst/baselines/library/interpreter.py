"""The discrete interpreter: the same machine on plain Python integers, one instruction at a time.

It is the reference the differentiable machine (machine.py) is tested against with one-hot programs,
and itself is tested against Python's own arithmetic (tests/test_library_programs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dfst.baselines.library.isa import CIRCUIT_OPS, TABLE_OPS, UNARY_OPS, Instr, MachineConfig, check_program


@dataclass
class DiscreteState:
    """Registers and memory as integers, the instruction counter, halted, steps taken."""

    registers: list[int]
    memory: list[int]
    counter: int = 0
    halted: bool = False
    steps: int = 0
    trace: list[int] = field(default_factory=list)


def initial_state(config: MachineConfig, registers: dict[int, int] | None = None,
                  memory: dict[int, int] | None = None) -> DiscreteState:
    """All zeros except the given register and memory values (each reduced mod base)."""
    regs, mem = [0] * config.registers, [0] * config.cells
    for i, value in (registers or {}).items():
        regs[i] = value % config.base
    for i, value in (memory or {}).items():
        mem[i] = value % config.base
    return DiscreteState(regs, mem)


def step(program: list[Instr], state: DiscreteState, config: MachineConfig) -> None:
    """Run the instruction at the counter (in place); every operand is read before anything is written."""
    ins, lines = program[state.counter], len(program)
    u, v = state.registers[ins.a], state.registers[ins.b]
    following = (state.counter + 1) % lines
    state.steps += 1
    state.counter = _next_line(ins, u, v, following, lines, state.counter)
    if ins.op == "halt":
        state.halted = True
    elif ins.op == "write":
        state.memory[u % config.cells] = v
    elif ins.op not in ("jump", "jumpr", "ret"):
        state.registers[ins.out] = _written_value(ins, u, v, following, state, config)


def _next_line(ins: Instr, u: int, v: int, following: int, lines: int, counter: int) -> int:
    """Where the counter goes: eq. 6 with one-hot distributions (jump when the flag equals 1)."""
    if ins.op == "halt":
        return counter
    if ins.op == "call" or (ins.op == "jump" and u == 1):
        return ins.target
    if ins.op == "jumpr" and u == 1:
        return v % lines
    if ins.op == "ret":
        return u % lines
    return following


def _written_value(ins: Instr, u: int, v: int, following: int, state: DiscreteState,
                   config: MachineConfig) -> int:
    """The value an instruction writes to its output register."""
    n = config.base
    if ins.op == "const":
        return ins.value
    if ins.op == "read":
        return state.memory[u % config.cells]
    if ins.op in ("store", "call"):
        return following % n
    op = CIRCUIT_OPS.get(ins.op, ins.op)
    return UNARY_OPS[op](u, n) if op in UNARY_OPS else TABLE_OPS[op](u, v, n)


def run_discrete(program: list[Instr], config: MachineConfig, state: DiscreteState,
                 trace: bool = False) -> DiscreteState:
    """Run until halt or config.max_steps; the state says which (`halted`)."""
    check_program(program, config)
    while not state.halted and state.steps < config.max_steps:
        if trace:
            state.trace.append(state.counter)
        step(program, state, config)
    return state
