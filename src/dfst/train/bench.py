"""`dfst bench train`: training iterations per second of the fused engine against autograd's graph,
measured in the same run on the same recipe, data, initialisation, batches and noise.

An iteration here is what the training loop repeats: the minibatch, the noise, the forward and
backward pass of the objective, and Adam's step (not the periodic evaluations, restart selection or
fine-tuning, which are the same for both engines). Its FLOP count is the arithmetic the pass needs,
counted per real step and restart: the next state (2d²) and the two readouts (2(k+5)d) forward,
twice that backward, and the normalisation (8d); the share of the machine's ceiling compares it with a
dense float32 matrix product of the same size class (the restarts' states through a d×d matrix),
timed here on one thread.
"""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from dfst.errors import DfstError
from dfst.model import INITS, DFSTConfig, Population
from dfst.tasks import TASKS
from dfst.train.batches import Sequences, batch_rows, bucket_rows, step_noise
from dfst.train.config import TrainConfig
from dfst.train.determinism import deterministic
from dfst.train.loop import forward_pass, training_data
from dfst.train.objectives import noise_at
from dfst.train.recipes import RECIPES
from dfst.train.restarts import restart_seed

BENCH_TASKS = ("add2", "add10", "mult2", "mult10", "div10x1")
ENGINES = ("autograd", "fused")


def bench_train(tasks=BENCH_TASKS, iters: int = 50, repeats: int = 3, threads: int = 1) -> list[dict]:
    """One row per task: iterations per second of each engine (best of `repeats` timings of `iters`
    iterations), their ratio, FLOPs per iteration and the fused engine's share of the ceiling."""
    if iters < 1 or repeats < 1 or threads < 1:
        raise DfstError(f"--iters, --repeats and --threads must be at least 1, got {iters}, {repeats}, "
                        f"{threads}")
    unknown = [t for t in tasks if t not in RECIPES]
    if unknown:
        raise DfstError(f"no recipe for task {unknown[0]!r} (benchmarked: tasks with a recipe)")
    ceiling = matmul_ceiling()
    return [bench_task(name, iters, repeats, threads, ceiling) for name in tasks]


def bench_task(name: str, iters: int, repeats: int, threads: int, ceiling: float) -> dict:
    """The row of one task's recipe (its data recorded once, then shared by both engines)."""
    cfg = replace(RECIPES[name], threads=threads)
    task = TASKS[name]
    seqs = Sequences.of(training_data(cfg, task))
    # the expert's state count: a fixed size class for timing, as docs/research/performance.md's table (a
    # benchmark, not a learner: a run takes its d from its PTOs, dfst.train.dsize)
    d, k = cfg.d or task.agent.d, len(task.alphabet)
    rates = {engine: max(_rate(replace(cfg, engine=engine), seqs, k, d, iters) for _ in range(repeats))
             for engine in ENGINES}
    flops = iteration_flops(cfg, seqs, k, d, iters)
    return {"task": name, "restarts": cfg.restarts, "batch": cfg.batch or len(seqs), "k": k, "d": d,
            "autograd_its": round(rates["autograd"], 1), "fused_its": round(rates["fused"], 1),
            "ratio": round(rates["fused"] / rates["autograd"], 2),
            "mflop_per_iteration": round(flops / 1e6, 2),
            "ceiling_gflops": round(ceiling / 1e9, 2),
            "fused_share": round(flops * rates["fused"] / ceiling, 4)}


def _rate(cfg: TrainConfig, seqs: Sequences, k: int, d: int, iters: int) -> float:
    """Iterations per second of the training loop's iteration under `cfg.engine` (after one untimed)."""
    with deterministic(cfg.threads):
        model = Population([INITS[cfg.init](DFSTConfig(k, d, cfg.task), restart_seed(cfg.seed, r))
                            for r in range(cfg.restarts)])
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=False)
        _iteration(model, optimizer, seqs, cfg, 1, d)
        start = time.perf_counter()
        for it in range(2, iters + 2):
            _iteration(model, optimizer, seqs, cfg, it, d)
        return iters / (time.perf_counter() - start)


def _iteration(model: Population, optimizer, seqs: Sequences, cfg: TrainConfig, it: int, d: int) -> None:
    reads, writes, moves, mask = seqs.batch(_rows(cfg, seqs, it))
    noise = step_noise(cfg.seed, it, noise_at(it - 1, cfg), (cfg.restarts, *reads.shape, d))
    _, total = forward_pass(model, (reads, writes, moves, mask), noise, it - 1, cfg, torch.device("cpu"))
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    optimizer.step()


def _rows(cfg: TrainConfig, seqs: Sequences, it: int):
    return (bucket_rows(cfg.seed, it, cfg.batch, seqs.lengths) if cfg.bucket
            else batch_rows(cfg.seed, it, cfg.batch, len(seqs)))


def iteration_flops(cfg: TrainConfig, seqs: Sequences, k: int, d: int, iters: int) -> float:
    """Mean arithmetic of one iteration over the timed iterations' batches (real steps only)."""
    per_step = 3 * (2 * d * d + 2 * (k + 5) * d) + 8 * d
    steps = sum(int(seqs.batch(_rows(cfg, seqs, it))[3].sum()) for it in range(2, iters + 2)) / iters
    return cfg.restarts * steps * per_step


def matmul_ceiling(size: int = 256, repeats: int = 20) -> float:
    """FLOP/s of a float32 (size×size)·(size×size) product on one thread: this machine's dense ceiling
    for the size class of the engine's work (best of `repeats`)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    finally:
        torch.set_num_threads(old)
    return 2 * size**3 / best
