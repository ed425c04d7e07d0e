"""Run a library program on a call: on the discrete interpreter, or batched on the soft machine."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from dfst.baselines.library.assembler import assemble
from dfst.baselines.library.execute import one_hot_state, run_soft
from dfst.baselines.library.interpreter import initial_state, run_discrete
from dfst.baselines.library.machine import compile_program
from dfst.baselines.library.programs import Call, LibraryProgram, Setup
from dfst.errors import DfstError


@dataclass(frozen=True)
class Answer:
    """The machine's answer, Python's, the steps taken, and whether every distribution stayed one-hot."""

    machine: object
    python: object
    steps: int | None  # None for a soft run
    exact: bool = True


def run_call_discrete(program: LibraryProgram, call: Call) -> Answer:
    """The discrete interpreter's answer; a DfstError if the program does not halt within its cap."""
    setup = program.setup(call)
    code = assemble(setup.source, setup.config.registers)
    state = run_discrete(code, setup.config, initial_state(setup.config, setup.registers, setup.memory))
    if not state.halted:
        raise DfstError(f"{program.name} did not halt within {setup.config.max_steps} steps")
    return Answer(setup.read(state.registers, state.memory), program.python(call), state.steps)


def _batch_tensors(setups: list[Setup]) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer registers (B, R) and memory (B, C) from each call's initial values."""
    config = setups[0].config
    registers = torch.zeros(len(setups), config.registers, dtype=torch.long)
    memory = torch.zeros(len(setups), config.cells, dtype=torch.long)
    for row, setup in enumerate(setups):
        for i, value in setup.registers.items():
            registers[row, i] = value
        for i, value in setup.memory.items():
            memory[row, i] = value
    return registers, memory


def run_calls_soft(program: LibraryProgram, calls: list[Call], prune: bool = True) -> list[Answer]:
    """The differentiable machine's answers for calls sharing one source and machine size, batched.

    The answer is read off the most likely value of each register and cell; `exact` says that every
    one of them had probability 1 (so the soft run equals a discrete one).
    """
    setups = [program.setup(call) for call in calls]
    first = setups[0]
    if any(s.source != first.source or s.config != first.config for s in setups):
        raise DfstError("a soft batch needs calls of one source and machine size (same depth, length)")
    code = assemble(first.source, first.config.registers)
    registers, memory = _batch_tensors(setups)
    with torch.no_grad():
        final = run_soft(compile_program(code, first.config),
                         one_hot_state(first.config, len(code), registers, memory), first.config,
                         prune=prune)
    return [_read_soft(setup, call, program, final, row) for row, (setup, call) in
            enumerate(zip(setups, calls))]


def _read_soft(setup: Setup, call: Call, program: LibraryProgram, final, row: int) -> Answer:
    regs, mem = final.registers[row], final.memory[row]
    exact = bool(final.halted[row] == 1) and bool((regs.max(-1).values == 1).all()) and bool(
        (mem.max(-1).values == 1).all())
    answer = setup.read(regs.argmax(-1).tolist(), mem.argmax(-1).tolist())
    return Answer(answer, program.python(call), None, exact)
