"""Benchmarks measured as ratios against a baseline in the same run.

`bench_rollout`: steps per second of the numba DFST engine against a straightforward per-step
PyTorch loop, on the same model and the same instance, batch 1, for several hidden sizes d. The model
is the compiled add2 expert embedded in d dimensions and turned by a random orthogonal change of
basis, so every weight matrix is dense (no one-hot shortcut) while the automaton is unchanged.
`bench_memory`: the peak memory of one long compiled run. `run_bench` is `dfst bench rollout`: both,
after checking every value.
"""

from __future__ import annotations

import resource
import time
import tracemalloc

import numpy as np
import torch

from dfst.automata import STOP
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights, rollout, run_dfst
from dfst.grid.world import act
from dfst.io.limits import default_max_memory
from dfst.tasks import TASKS
from dfst.tasks.budget import check_rollout


def run_bench(dims=(12, 20, 32, 108), digits: int = 300_000, torch_steps: int = 20_000, repeats: int = 3,
              memory_digits: int = 1_000_000) -> dict:
    """{"rollout": `bench_rollout` rows, "memory": `bench_memory`}; every value is checked first (the
    messages name the options of `dfst bench rollout`)."""
    for name, value in (("--digits", digits), ("--torch-steps", torch_steps), ("--repeats", repeats),
                        ("--memory-digits", memory_digits)):
        if value < 1:
            raise DfstError(f"{name} must be at least 1, got {value}")
    if min(dims) < smallest_dim():
        raise DfstError(f"--dims must be >= {smallest_dim()}, the add2 expert's number of states")
    for name, n in (("--digits", digits), ("--memory-digits", memory_digits)):  # before any work
        check_rollout(TASKS["add2"], n, n, default_max_memory(), f"{name} {n:,}")
    rows = bench_rollout(dims, digits, torch_steps, repeats)
    return {"rollout": rows, "memory": bench_memory(memory_digits)}


def smallest_dim() -> int:
    """The bench embeds the add2 expert, so d must be at least its number of states."""
    return TASKS["add2"].agent.d


def dense_expert(d: int, seed: int = 0) -> DfstWeights:
    """The add2 expert compiled, padded to d dimensions and rotated by a random orthogonal Q."""
    from dfst.model.compile import compile_agent

    A, B, C, h0 = (w.astype(np.float64) for w in compile_agent(TASKS["add2"].agent).numpy_weights())
    k, d0 = A.shape[0], A.shape[1]
    if d < d0:
        raise ValueError(f"d={d} is smaller than the add2 expert's {d0} states")
    Ap = np.zeros((k, d, d))
    Ap[:, :d0, :d0] = A
    Bp, Cp = np.pad(B, ((0, 0), (0, 0), (0, d - d0))), np.pad(C, ((0, 0), (0, 0), (0, d - d0)))
    hp = np.pad(h0, (0, d - d0))
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return DfstWeights.of(Q @ Ap @ Q.T, Bp @ Q.T, Cp @ Q.T, Q @ hp)


def torch_loop_steps_per_second(weights: DfstWeights, cells: np.ndarray, head, max_steps: int) -> float:
    """The baseline: one PyTorch mat-vec per step, argmax readouts, Python moves the head."""
    A, B, C, h = (torch.from_numpy(w.copy()) for w in (weights.A, weights.B, weights.C, weights.h0))
    cells, (r, c) = cells.copy(), head
    steps, start = 0, time.perf_counter()
    with torch.no_grad():
        while steps < max_steps:
            x = int(cells[r, c])
            write, move = int(torch.argmax(B[x] @ h)), int(torch.argmax(C[x] @ h))
            r, c = act(cells, (r, c), write, move)
            steps += 1
            if move == STOP:
                break
            h = A[x] @ h
    return steps / (time.perf_counter() - start)


def bench_rollout(dims=(12, 20, 32, 108), digits: int = 300_000, torch_steps: int = 20_000,
                  repeats: int = 3, seed: int = 0) -> list[dict]:
    """One row per d: engine and PyTorch steps/s on the same instance (best of `repeats`), and ratio."""
    task = TASKS["add2"]
    instance = task.random_instances(digits, 1, seed=seed)[0]
    layout = task.layout(instance)
    rows = []
    for d in dims:
        weights = dense_expert(d, seed)
        run_dfst(weights, task.layout(task.random_instances(3, 1, seed=seed)[0]), 100)  # JIT warm-up
        engine, exact, steps = 0.0, True, 0
        for _ in range(repeats):
            start = time.perf_counter()
            run = run_dfst(weights, layout, task.max_steps(instance))
            engine = max(engine, run.steps / (time.perf_counter() - start))
            exact &= task.read_answer(run.cells, layout.answer) == task.expected(instance)
            steps = run.steps
        baseline = max(torch_loop_steps_per_second(weights, layout.cells, layout.head, torch_steps)
                       for _ in range(repeats))
        rows.append({"d": d, "engine_steps_per_s": round(engine), "torch_steps_per_s": round(baseline),
                     "ratio": round(engine / baseline, 1), "engine_steps": steps, "exact": bool(exact)})
    return rows


def bench_memory(digits: int = 1_000_000, seed: int = 0) -> dict:
    """Peak traced allocations (numpy grids included) of one compiled add2 run at `digits` digits."""
    from dfst.model.compile import compile_agent

    task = TASKS["add2"]
    weights = DfstWeights.of(*compile_agent(task.agent).numpy_weights())
    instance = task.random_instances(digits, 1, seed=seed)[0]
    tracemalloc.start()
    result = rollout(task, [instance], weights=weights)[0]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"digits": digits, "steps": result.steps, "exact": result.exact,
            "peak_traced_mib": round(peak / 2**20, 1),
            "process_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
