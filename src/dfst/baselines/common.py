"""What every baseline shares: its result (`dfst.results.Result`) and its scoring under the DFST's
own protocol.

A baseline maps operand pairs to answers (input/output systems: the LSTM, the Neural GPU, the NTM,
the TP-Transformer, and the sequence-model policies, whose predictor runs them closed loop on the
grid) or is an automaton compiled to DFST weights (RPNI, scored by `dfst.protocol.evaluate.run_protocol`, as
`dfst eval` scores a DFST). The first kind is scored by `evaluate_predictor`, which hands the predictor
to `dfst.protocol.score`, the scorer of `dfst score`: at each length N the task's hard instances plus
`random` seeded random pairs (exactly `dfst eval`'s), exact match of the whole answer. Robust at N:
every instance exact; probabilistic: every random pair.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from dfst.errors import DfstError
from dfst.protocol.clock import alone_seconds
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut
from dfst.protocol.ladder import max_passing
from dfst.protocol.scorer import batched, score_with
from dfst.tasks.base import Instance, Task

# The input/output baselines' evaluation budget (config eval_seconds): their ladder stops before a length
# predicted to overrun it, counted as CPU time alone (`dfst.protocol.clock.alone_seconds`).
IO_EVAL_SECONDS = 600.0
# Predicts answers (digit strings, most significant first, no leading zeros except "0") for a batch of
# instances; None where the system gives no readable answer.
Predictor = Callable[[list[Instance]], list[str | None]]
# A length's instances go to a predictor in one call, as they always have (each baseline batches inside),
# up to the protocol's 32 MiB of requests a call (`dfst.protocol.scorer.BATCH_BYTES`).
LEVEL_AT_ONCE = 1 << 30


def hardware() -> str:
    """A short description of where training ran, for the table."""
    if torch.cuda.is_available():
        return f"GPU {torch.cuda.get_device_name(0)}"
    return f"CPU {platform.machine()} x{torch.get_num_threads()} threads"


def evaluate_predictor(task: Task, predict: Predictor, digits: Sequence[int], *, random: int = 10,
                       seed: int = 0, hard: bool = True, stop_at_failure: bool = False,
                       stop_when_none_exact: bool = False, time_budget: float | None = None,
                       trained_on: Iterable[tuple[str, str]] = (),
                       on_level: Callable[[dict], None] | None = None, **stops) -> dict:
    """Score `predict` at each length through `dfst.protocol.score_with`, the scorer of `dfst score`.

    Returns {"robust_lg", "probabilistic_lg", "levels", "protocol", "stopped_by"}: levels as
    `dfst score` reports them (hard set and random pairs apart, the failing hard instances by name,
    the first failure) less their timings, so a seed reproduces a result bit for bit; "protocol"
    names the instance set (its SHA-256, as `dfst score --instances-out` of the lengths scored).
    `stop_at_failure` stops after the first length that is not robust, `stop_when_none_exact` after
    the first with no exact answer (to trace an accuracy curve without paying for lengths where
    nothing works); `on_level(scores so far)` is called after each length (a long ladder saves as
    it goes).
    `time_budget` and `stops` (`growth`, `before`) are the ladder loop's (`dfst.protocol.ladder.climb`);
    the budget counts the time the evaluation would take alone (`dfst.protocol.clock`: a baseline
    runs in this process), so that other jobs on the cores never cut its ladder short.
    `trained_on`: the operand pairs the system was trained on, never scored.
    """
    def after_level(levels: list[dict]) -> bool:
        if on_level is not None:
            on_level(_scores(levels))
        last = levels[-1]
        return (stop_at_failure and not last["robust"]) or (stop_when_none_exact and last["exact"] == 0)

    cfg = EvalConfig(tuple(sorted(set(digits))), random, hard, seed, time_budget=time_budget)
    result = score_with(batched(instance_predictor(predict), LEVEL_AT_ONCE), task, cfg, system="baseline",
                        after_level=after_level, held_out=HeldOut(trained_on), clock=alone_seconds, **stops)
    protocol = {key: result.details[key] for key in ("instances_sha256", "instance_count", "hard_set")}
    return _scores(result.levels) | {"protocol": protocol, "stopped_by": result.details["stopped_by"]}


def power_growth(power: int) -> Callable[[int, int], float]:
    """The ladder's `growth` for a model whose evaluation of a length-n instance costs ~ n ** power
    (a recurrent model reads n symbols; a Neural GPU runs n steps over n cells), so a time budget
    stops before the length that would overrun it."""
    return lambda n, last: (n / last) ** power


def _scores(levels: list[dict]) -> dict:
    levels = [{k: v for k, v in level.items() if k != "seconds"} for level in levels]
    return {"robust_lg": max_passing(levels, "robust"),
            "probabilistic_lg": max_passing(levels, "probabilistic"), "levels": levels}


def instance_predictor(predict: Predictor) -> Callable[[list[tuple[str, str]]], list[str | None]]:
    """`predict` as the protocol calls a model: operand pairs in, answers out (a baseline's predictor
    takes Instances, which carry no hard-set name here: a model must not see which case it is)."""
    return lambda pairs: predict([Instance(a, b) for a, b in pairs])


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
