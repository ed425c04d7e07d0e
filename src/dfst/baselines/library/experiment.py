"""Seed 002's experiment (b): recursion depth vs trainability (its Table 1), at laptop scale.

A minimal network, one layer before the machine and one after, learns to route two one-hot inputs
(a, b) into fib's argument registers and to read the answer out; the compiled fib (depth d) runs
frozen in between, and only the answer F(d + 1) is supervised (cross-entropy). Every pair of the
base is a sample, 70% for training; the score is exact-answer accuracy on the other 30%.

Two routers (the layer before). "slots" (default) is the seed's "learns the correct permutation":
each argument register is a softmax mixture of the input slots (a, b). "values" is a Linear layer
from both one-hot inputs to each register's value logits: it can put any split (x, F(d+1) - ...)
of the answer in the registers, pair by pair, and at bases 16-64 it memorises the training pairs
instead of routing (near 0% test accuracy, docs/research/library.md). A softmax near uniform also gives the
router no first-order gradient: the sum of a uniform value with anything is uniform.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from dfst.baselines.library.assembler import assemble
from dfst.baselines.library.execute import check_work, initial_soft_state, step
from dfst.baselines.library.isa import TABLE_OPS
from dfst.baselines.library.machine import build_wiring, compile_program
from dfst.baselines.library.programs import Call, get_program
from dfst.errors import DfstError

ROUTERS = ("slots", "values")

# The seed's Table 1: test accuracy (%) of its minimal network, by depth 1..6.
SEED_TABLE_1 = {128: [85.78, 96.20, 93.10, 46.40, 99.83, 100.0],
                256: [95.64, 99.83, 99.88, 89.39, 100.0, 100.0]}


@dataclass(frozen=True)
class DepthConfig:
    """One configuration of the experiment; the defaults run in about a CPU minute at base 128."""

    base: int = 128
    depth: int = 1
    epochs: int = 3
    batch: int = 32
    lr: float = 0.05
    train_fraction: float = 0.7
    seed: int = 0
    router: str = "slots"  # slots: a softmax over the inputs (a, b) per register; values: Linear
    # float32 rounding on soft (mixed) values grows about twofold a step through fib's returns and
    # overflows by depth 6 (docs/research/library.md); float64 starts 1e9 times lower
    dtype: str = "float64"

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.depth < 1 or self.base < 2:
            raise DfstError(f"need epochs >= 1, depth >= 1 and base >= 2, got {self.epochs}, {self.depth} "
                            f"and {self.base}")


class RoutedFib(torch.nn.Module):
    """inputs -> Linear -> softmax registers r0, r1 -> frozen fib -> r1 -> Linear -> logits."""

    def __init__(self, config: DepthConfig):
        super().__init__()
        n = config.base
        self.setup = get_program("fib").setup(Call((0, 0), n, config.depth))
        self.code = assemble(self.setup.source, self.setup.config.registers)
        self.program = compile_program(self.code, self.setup.config)  # frozen: no parameter
        self.wiring = build_wiring(self.setup.config, len(self.code))
        self.steps = 12 * config.depth + 11  # fib's exact step count (tests/test_library_programs.py)
        self.router = config.router
        if config.router == "slots":  # small random logits: a mixture of a and b in each register
            self.route = torch.nn.Parameter(0.1 * torch.randn(2, 2))
        else:
            self.route = torch.nn.Linear(2 * n, 2 * n)
        self.read = torch.nn.Linear(n, n)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n, machine = self.read.in_features, self.setup.config
        inputs = torch.stack([torch.nn.functional.one_hot(a, n), torch.nn.functional.one_hot(b, n)], 1)
        inputs = inputs.to(torch.get_default_dtype())                            # (B, 2 slots, n)
        if self.router == "slots":
            args = torch.einsum("rs,bsn->brn", self.route.softmax(-1), inputs)   # (B, 2 registers, n)
        else:
            args = self.route(inputs.flatten(1)).view(-1, 2, n).softmax(-1)
        rest = torch.zeros(len(a), machine.registers - 2, n)
        rest[..., 0] = 1
        memory = torch.zeros(len(a), machine.cells, n)
        memory[..., 0] = 1
        state = initial_soft_state(machine, len(self.code), torch.cat([args, rest], 1), memory)
        for _ in range(self.steps):  # prune is exact here: the counter depends on no parameter
            state = step(self.program, state, self.wiring, prune=True)
        return self.read(state.registers[:, 1])                                  # (B, n)


def _fib_targets(a: torch.Tensor, b: torch.Tensor, depth: int, base: int) -> torch.Tensor:
    for _ in range(depth):
        a, b = b, (a + b) % base
    return b


def run_depth(config: DepthConfig, train_samples: int | None = None, test_samples: int | None = None) -> dict:
    """Train one configuration (on the first `train_samples` training pairs, default all); test
    accuracy on the first `test_samples` held-out pairs (default all) after each epoch, and the CPU
    seconds it took."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, config.dtype))
    try:
        return _train_depth(config, train_samples, test_samples)
    finally:
        torch.set_default_dtype(previous)


def _split(config: DepthConfig, train_samples: int | None, test_samples: int | None):
    """Every pair of the base in a seeded order: the training pairs (70%) and the held-out ones."""
    n = config.base
    pairs = torch.cartesian_prod(torch.arange(n), torch.arange(n))[torch.randperm(n * n)]
    cut = _cut(config)
    return pairs[:cut][:train_samples], pairs[cut:][:test_samples]


def _cut(config: DepthConfig) -> int:
    return int(config.train_fraction * config.base ** 2)


def check_depth_work(config: DepthConfig, train: int, test: int) -> None:
    """Refuse, before any training, a configuration above the machine's work cap: each epoch trains on
    `train` pairs (forward and backward, about 3 passes) and scores `train` and `test` pairs."""
    model = RoutedFib(config)
    used = len({line.op for line in model.code} & set(TABLE_OPS))  # pruned: fib pays for its add alone
    check_work(model.setup.config, len(model.code), config.epochs * (4 * train + test), model.steps, used)


def _train_depth(config: DepthConfig, train_samples: int | None, test_samples: int | None) -> dict:
    torch.manual_seed(config.seed)
    train, test = _split(config, train_samples, test_samples)
    check_depth_work(config, len(train), len(test))
    model = RoutedFib(config)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    started, history, train_history = time.process_time(), [], []
    for _ in range(config.epochs):
        for batch in train[torch.randperm(len(train))].split(config.batch):
            target = _fib_targets(batch[:, 0], batch[:, 1], config.depth, config.base)
            loss = torch.nn.functional.cross_entropy(model(batch[:, 0], batch[:, 1]), target)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        history.append(_accuracy(model, test, config))
        train_history.append(_accuracy(model, train, config))
    return {"config": asdict(config), "train_samples": len(train), "test_samples": len(test),
            "machine_steps": model.steps, "test_accuracy": history,
            "train_accuracy": train_history, "route": model.route.detach().softmax(-1).tolist()
            if config.router == "slots" else None,
            "cpu_seconds": round(time.process_time() - started, 1)}


@torch.no_grad()
def _accuracy(model: RoutedFib, pairs: torch.Tensor, config: DepthConfig) -> float:
    right = 0
    for batch in pairs.split(1024):
        target = _fib_targets(batch[:, 0], batch[:, 1], config.depth, config.base)
        right += int((model(batch[:, 0], batch[:, 1]).argmax(-1) == target).sum())
    return round(100 * right / len(pairs), 2)


def run_depth_table(base: int, depths: list[int], epochs: int, train_samples: int | None,
                    seed: int = 0, router: str = "slots", test_samples: int | None = None) -> dict:
    """Every depth at one base, with the seed's Table 1 row beside ours. Every depth's work is checked
    before the first is trained, so a table is refused whole, not after hours of its first rows."""
    if router not in ROUTERS:
        raise DfstError(f"unknown router {router!r}; choose from {', '.join(ROUTERS)}")
    configs = [DepthConfig(base=base, depth=depth, epochs=epochs, seed=seed, router=router)
               for depth in depths]
    for config in configs:
        cut, held_out = _cut(config), base * base - _cut(config)
        check_depth_work(config, min(cut, train_samples or cut), min(held_out, test_samples or held_out))
    rows = []
    for config in configs:
        depth = config.depth
        rows.append(run_depth(config, train_samples, test_samples))
        seed_row = SEED_TABLE_1.get(base)
        rows[-1]["seed_test_accuracy"] = seed_row[depth - 1] if seed_row and 1 <= depth <= 6 else None
    return {"format": "dfst-library-depth", "version": 1, "experiment": "seed 002 (b): recursion depth vs "
            "trainability, minimal network, fib", "base": base, "router": router,
            "rows": rows}
