"""The soft machine follows the seed's equations: eq. 7's dense table, distributions that stay
distributions, lockstep agreement with the discrete interpreter on random programs, gradients
through a frozen called program, and the assembler's one-line errors."""

from __future__ import annotations

import random

import pytest
import torch

from dfst.baselines.library import sources
from dfst.baselines.library.assembler import assemble
from dfst.baselines.library.execute import _table_terms, one_hot_state, run_soft, step
from dfst.baselines.library.interpreter import initial_state
from dfst.baselines.library.interpreter import step as discrete_step
from dfst.baselines.library.isa import OPCODE_INDEX, OPCODES, SHAPES, TABLE_OPS, UNARY_OPS, MachineConfig
from dfst.baselines.library.machine import SoftProgram, build_wiring, compile_program, dense_table
from dfst.errors import DfstError

CONFIG = MachineConfig(base=8, registers=4, cells=4, max_steps=60)


def test_alu_is_the_einsum_of_eq_7_on_soft_operands():
    torch.manual_seed(0)
    n, batch = 5, 6
    config = MachineConfig(base=n)
    names = list(TABLE_OPS) + list(UNARY_OPS)
    f_table = torch.rand(batch, len(names)).softmax(-1)
    f = torch.zeros(batch, len(OPCODES))
    f[:, [OPCODE_INDEX[op] for op in names]] = f_table
    u, v = torch.rand(batch, n).softmax(-1), torch.rand(batch, n).softmax(-1)
    want = torch.einsum("bi,bj,bk,ijkl->bl", f_table, u, v, dense_table(config))
    got = _table_terms(f, u, v, build_wiring(config, 4), prune=False)
    assert torch.allclose(got, want, atol=1e-6)


def _random_soft_program(lines: int, config: MachineConfig, seed: int) -> SoftProgram:
    g = torch.Generator().manual_seed(seed)
    shapes = [(len(OPCODES),)] + [(config.registers,)] * 3 + [(config.base,), (lines,)]
    return SoftProgram(*(torch.randn(lines, *s, generator=g).softmax(-1) for s in shapes))


@pytest.fixture
def float64():
    """In float32 the sums drift by ~1e-5 in 25 steps (eq. 7 multiplies two operands' rounding
    errors); the equations conserve mass exactly, which float64 shows to 1e-12."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def test_a_soft_program_keeps_every_distribution_normalised(float64):
    lines, config = 6, CONFIG
    program = _random_soft_program(lines, config, 3)
    g = torch.Generator().manual_seed(4)
    state = one_hot_state(config, lines, torch.randint(8, (5, 4), generator=g),
                          torch.randint(8, (5, 4), generator=g))
    wiring = build_wiring(config, lines)
    for _ in range(25):
        state = step(program, state, wiring)
    for tensor in (state.registers, state.memory, state.counter):
        assert torch.allclose(tensor.sum(-1), torch.ones(()), atol=1e-12)
        assert bool((tensor >= -1e-15).all())
    assert bool(((state.halted >= 0) & (state.halted <= 1)).all())


def _random_line(rng: random.Random, lines: int, config: MachineConfig) -> str:
    """One random instruction with random operands (values and targets in range)."""
    op = rng.choice(list(SHAPES))
    words = {"r": lambda: f"r{rng.randrange(config.registers)}", "v": lambda: str(rng.randrange(config.base)),
             "L": lambda: f"l{rng.randrange(lines)}"}
    return " ".join([op] + [words[k]() for k in SHAPES[op].split()])


def _random_source(rng: random.Random, lines: int, config: MachineConfig) -> str:
    body = [_random_line(rng, lines, config) for _ in range(lines - 1)] + ["halt"]
    return "\n".join(f"l{i}:\n{line}" for i, line in enumerate(body))


@pytest.mark.parametrize("seed", range(4))
def test_soft_machine_steps_with_the_interpreter_on_random_programs(seed):
    rng = random.Random(seed)
    code = assemble(_random_source(rng, 8, CONFIG), CONFIG.registers)
    regs = [[rng.randrange(8) for _ in range(4)] for _ in range(3)]
    mems = [[rng.randrange(8) for _ in range(4)] for _ in range(3)]
    program, wiring = compile_program(code, CONFIG), build_wiring(CONFIG, len(code))
    soft = one_hot_state(CONFIG, len(code), torch.tensor(regs), torch.tensor(mems))
    discrete = [initial_state(CONFIG, dict(enumerate(r)), dict(enumerate(m))) for r, m in zip(regs, mems)]
    for _ in range(30):
        soft = step(program, soft, wiring, prune=bool(rng.getrandbits(1)))
        for row, state in enumerate(discrete):
            discrete_step(code, state, CONFIG)
            assert soft.registers[row].argmax(-1).tolist() == state.registers
            assert soft.memory[row].argmax(-1).tolist() == state.memory
            assert int(soft.counter[row].argmax()) == state.counter
            assert float(soft.halted[row]) == float(state.halted)
        assert bool((soft.registers.max(-1).values == 1).all())  # still one-hot


def test_gradients_flow_through_a_frozen_called_program():
    """A caller whose argument registers are soft and trainable calls the compiled fib: the
    gradient of the answer's loss with respect to the caller's logits is finite and not zero."""
    config = MachineConfig(base=32, registers=8, cells=4, max_steps=60)
    caller = "main:\n copy r6 r0\n copy r7 r1\n const 2 r2\n const 0 r4\n call fib r5\n halt\n"
    code = assemble(caller + sources.FIB_FUNCTION, config.registers)
    frozen = compile_program(code, config)
    logits = torch.zeros(2, config.registers, requires_grad=True)  # which registers feed a and b
    program = frozen.replace(a=torch.cat([logits.softmax(-1), frozen.a[2:]]))
    state = one_hot_state(config, len(code), torch.tensor([[0, 0, 0, 0, 0, 0, 3, 5]]),
                          torch.zeros(1, 4, dtype=torch.long))
    final = run_soft(program, state, config, steps=40)
    loss = -final.registers[0, 1, (3 + 2 * 5) % 32].clamp_min(1e-12).log()  # fib(3, 5, depth 2) = 13
    loss.backward()
    assert torch.isfinite(logits.grad).all() and logits.grad.abs().sum() > 0
    assert not frozen.a.requires_grad


@pytest.mark.parametrize("text, message", [
    ("frob r1\nadd r0 r1\nhalt", "line 1: unknown instruction 'frob'; line 2: add takes 3"),
    ("jump r1 nowhere", "unknown label 'nowhere'"),
    ("a:\na:\nhalt", "label 'a' defined twice"),
    ("copy r9 r0", "'r9' is not a register r0..r7"),
    ("# nothing", "no instruction"),
])
def test_assembler_reports_every_problem_in_one_line(text, message):
    with pytest.raises(DfstError, match=message):
        assemble(text, 8)


def test_a_program_too_long_for_its_return_addresses_is_refused():
    code = assemble(sources.FIB.replace("{depth}", "1"), 8)
    with pytest.raises(DfstError, match="needs base >= 16"):
        compile_program(code, MachineConfig(base=8))
