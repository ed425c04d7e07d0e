"""What every baseline shares: its result (`dfst.results.Result`, here also under its old name
BaselineResult) and the evaluation on the DFST's own protocol.

A baseline maps operand pairs to answers (input/output systems) or runs on the grid (automaton
learners). Either way it is scored like the DFST: at each length N the task's hard instances plus
`random` seeded random pairs (exactly the instances `dfst eval` uses, `evaluate.level_instances`),
exact match of the whole answer. Robust at N: every instance exact; probabilistic: every random pair.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Sequence

import numpy as np
import torch

from dfst.errors import DfstError
from dfst.evaluate import EvalConfig, level_instances, wilson_interval
from dfst.results import Result
from dfst.tasks.base import Instance, Task

# Predicts answers (digit strings, most significant first, no leading zeros except "0") for a batch of
# instances; None where the system gives no readable answer.
Predictor = Callable[[list[Instance]], list[str | None]]


# The old name of the one result type (dfst.results.Result), kept: every baseline builds one.
BaselineResult = Result


def hardware() -> str:
    """A short description of where training ran, for the table."""
    if torch.cuda.is_available():
        return f"GPU {torch.cuda.get_device_name(0)}"
    return f"CPU {platform.machine()} x{torch.get_num_threads()} threads"


def evaluate_predictor(task: Task, predict: Predictor, digits: Sequence[int], *, random: int = 10,
                       seed: int = 0, hard: bool = True, stop_at_failure: bool = False,
                       stop_when_none_exact: bool = False) -> dict:
    """Score `predict` at each length; returns {"robust_lg", "probabilistic_lg", "levels"}.

    Each level lists the names of the instances that failed (hard ones by name, random pairs as
    "random"), so a reader can see which hard cases a system misses. `stop_at_failure` stops after
    the first level that is not robust, `stop_when_none_exact` after the first with no exact answer
    (to trace an accuracy curve without paying for lengths where nothing works).
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
        if (stop_at_failure and not all(exact)) or (stop_when_none_exact and not any(exact)):
            break
    return {"robust_lg": max_passing(levels, "robust"),
            "probabilistic_lg": max_passing(levels, "probabilistic"), "levels": levels}


def max_passing(levels: list[dict], key: str) -> int:
    """The largest length with every level up to it passing `key` ("robust" or "probabilistic")."""
    best = 0
    for lv in levels:
        if not lv[key]:
            break
        best = lv["digits"]
    return best


def merge_config(config: dict, defaults: dict, label: str) -> dict:
    """`defaults` overridden by `config`; a key `defaults` lacks is a one-line DfstError."""
    unknown = set(config) - set(defaults)
    if unknown:
        raise DfstError(f"unknown {label} config keys: {', '.join(sorted(unknown))}")
    return {**defaults, **config}


def clipped_step(optimizer: torch.optim.Optimizer, model: torch.nn.Module, loss: torch.Tensor,
                 clip: float) -> float:
    """One optimiser step on `loss` with the gradient norm clipped to `clip`; returns the loss."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss.item()


def count_params(module: torch.nn.Module) -> int:
    """Trainable parameters of a PyTorch model."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def sample_pairs(task: Task, rng: np.random.Generator, count: int, max_digits: int,
                 min_digits: int = 1) -> list[Instance]:
    """`count` operand pairs by the PTO datasets' sampling rule (`dfst.data.sample_instance`), so
    I/O-pair baselines see operands drawn exactly like the DFST's training operands."""
    from dfst.data import sample_instance

    return [sample_instance(task, rng, min_digits, max_digits) for _ in range(count)]


def length_ladder(start: int, top: int = 2000) -> list[int]:
    """start, 2x, 5x, 10x, 20x, 50x, ... below `top`, then `top`: the I/O baselines' lengths."""
    out, scale = [], 1
    while start * scale < top:
        out += [start * f * scale for f in (1, 2, 5) if start * f * scale < top]
        scale *= 10
    return out + [top]
