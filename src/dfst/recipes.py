"""The training recipe per task, and the length each task must reach (issue 4's acceptance bars).

What works (docs/training.md): the published MSE loss and cosine Adam, but h normalised at every
teacher-forced step with Gaussian noise on its direction (σ = 0.03), a jittered identity init,
several restarts trained side by side, and the automaton read off the kept restart's states
(clustered, merged nearest-first). The published baseline stays reachable: `PUBLISHED`.
"""

from __future__ import annotations

from dataclasses import replace

from dfst.errors import DfstError
from dfst.train.config import PUBLISHED, TrainConfig

__all__ = ["DEFAULT", "MULT", "PUBLISHED", "RECIPES", "TARGET_DIGITS", "recipe"]

# TrainConfig's defaults are the recipe; the per-task entries override the sample budget and the effort.
DEFAULT = TrainConfig(eval_every=0)

# The multiplications: long PTOs, so weaker noise (at σ = 0.03 even the expert's loss is 0.115 on
# mult2) and a cover of rule pairs (a rule cover never shows the operand 0); docs/training.md section 9
MULT = replace(DEFAULT, restarts=4, batch=64, bucket=True, sampler="pairs", noise=0.01, iters=8000)

RECIPES: dict[str, TrainConfig] = {
    "add2": replace(DEFAULT, task="add2", samples=20, max_digits=3),
    "add10": replace(DEFAULT, task="add10", samples=225, max_digits=3, restarts=8),
    "mult2": replace(MULT, task="mult2", samples=750, max_digits=5),
    # samples of at most 3 digits: mult10's PTOs reach 1,038 steps at 5 digits (522 at 3), and 3 digits
    # already show every rule and pair of rules (docs/training.md section 10)
    "mult10": replace(MULT, task="mult10", samples=400, max_digits=3),
}

# Robust length the issue asks for, per task.
TARGET_DIGITS = {"add2": 100_000, "add10": 100_000, "mult2": 1000, "mult10": 300}

def recipe(task: str, seed: int, **overrides) -> TrainConfig:
    """The recipe of `task` with the given seed (and any field overridden)."""
    if task not in RECIPES:
        raise DfstError(f"no training recipe for task {task!r} (known: {', '.join(RECIPES)})")
    return replace(RECIPES[task], seed=seed, **overrides)
