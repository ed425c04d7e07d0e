"""What every baseline shares: its result record and the evaluation on the DFST's own protocol.

A baseline maps operand pairs to answers (input/output systems) or runs on the grid (automaton
learners). Either way it is scored like the DFST: at each length N the task's hard instances plus
`random` seeded random pairs (exactly the instances `dfst eval` uses, `evaluate.level_instances`),
exact match of the whole answer. Robust at N: every instance exact; probabilistic: every random pair.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import torch

from dfst.evaluate import EvalConfig, level_instances, wilson_interval
from dfst.tasks.base import Instance, Task

# Predicts answers (digit strings, most significant first, no leading zeros except "0") for a batch of
# instances; None where the system gives no readable answer.
Predictor = Callable[[list[Instance]], list[str | None]]


@dataclass
class BaselineResult:
    """One trained baseline on one task and seed; `dfst table` reads these from JSON."""

    system: str
    task: str
    seed: int
    samples: int             # training examples (I/O pairs, scratchpads or PTOs) the system saw
    params: int              # trainable parameters (0 for an automaton learner: report its states)
    max_train_digits: int
    robust_lg: int           # largest N with every tested length <= N robust (0 if none)
    probabilistic_lg: int
    train_seconds: float
    hardware: str
    levels: list[dict] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    notes: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def hardware() -> str:
    """A short description of where training ran, for the table."""
    if torch.cuda.is_available():
        return f"GPU {torch.cuda.get_device_name(0)}"
    return f"CPU {platform.machine()} x{torch.get_num_threads()} threads"


def evaluate_predictor(task: Task, predict: Predictor, digits: Sequence[int], *, random: int = 10,
                       seed: int = 0, hard: bool = True, stop_at_failure: bool = False) -> dict:
    """Score `predict` at each length; returns {"robust_lg", "probabilistic_lg", "levels"}.

    Each level lists the names of the instances that failed (hard ones by name, random pairs as
    "random"), so a reader can see which hard cases a system misses.
    """
    cfg = EvalConfig(digits=tuple(digits), random=random, hard=hard, seed=seed)
    levels = []
    for n in sorted(set(digits)):
        instances = level_instances(task, n, cfg)
        answers = predict(instances)
        exact = [ans is not None and ans == task.expected(inst) for inst, ans in zip(instances, answers)]
        rand = [ok for inst, ok in zip(instances, exact) if inst.name == "random"]
        low, high = wilson_interval(sum(rand), len(rand))
        levels.append({
            "digits": n, "instances": len(instances), "exact": sum(exact),
            "random": len(rand), "random_exact": sum(rand), "wilson_low": low, "wilson_high": high,
            "robust": all(exact), "probabilistic": bool(rand) and all(rand),
            "failures": [inst.name for inst, ok in zip(instances, exact) if not ok],
        })
        if stop_at_failure and not all(exact):
            break
    return {"robust_lg": _max_passing(levels, "robust"),
            "probabilistic_lg": _max_passing(levels, "probabilistic"), "levels": levels}


def _max_passing(levels: list[dict], key: str) -> int:
    best = 0
    for lv in levels:
        if not lv[key]:
            break
        best = lv["digits"]
    return best
