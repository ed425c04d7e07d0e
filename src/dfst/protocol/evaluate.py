"""A DFST (or an automaton compiled to one) under the protocol, on dfst's own engine.

At each length N: the task's hard structured instances with N digits plus R random pairs of N-digit
operands (default R = 10, seeded; `dfst.protocol.instances.level_instances`). Robust at N: every
instance exact. Probabilistic at N: the random pairs only, reported with a 95% Wilson interval.
`robust_max_digits` and `probabilistic_max_digits` are the largest tested N such that every tested
length up to N passed. The lengths, the memory and time bounds and the stops are the one ladder
loop's (`dfst.protocol.ladder.climb`); here a length is run by `rollout` in parallel, with the steps
counted for the progress display and the first failing instance kept for `dfst replay`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from dfst.grid.rollout import DfstWeights, InstanceResult, rollout
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut, level_instances
from dfst.protocol.ladder import check_lengths, climb, max_passing
from dfst.protocol.tally import wilson_interval
from dfst.tasks.base import Task
from dfst.tasks.budget import Estimate, estimate_eval


@dataclass
class LevelReport:
    digits: int
    instances: int
    exact: int
    random: int
    random_exact: int
    wilson_low: float
    wilson_high: float
    steps: int
    seconds: float
    failures: list[dict] = field(default_factory=list)  # every failing instance, without operands
    excluded: int = 0  # protocol instances left out or drawn again: the model was trained on them

    @property
    def robust(self) -> bool:
        return self.exact == self.instances

    @property
    def probabilistic(self) -> bool:
        """All random pairs exact; with no random pairs there is nothing to claim."""
        return self.random > 0 and self.random_exact == self.random


def level_estimate(task: Task, n: int, cfg: EvalConfig) -> Estimate:
    """What one length of the protocol will hold (`dfst.tasks.budget.estimate_eval`)."""
    return estimate_eval(task, n, random=cfg.random, hard=cfg.hard)


def evaluate_level(
    task: Task, weights: DfstWeights | None, n: int, instances: list, cfg: EvalConfig,
    on_steps: Callable[[int], None] | None = None,
) -> tuple[LevelReport, InstanceResult | None]:
    """Run one length; returns the report and the first failing instance (or None)."""
    start = time.perf_counter()
    results = rollout(task, instances, weights=weights, rescale=cfg.rescale, on_steps=on_steps)
    seconds = time.perf_counter() - start
    rand = [r for r in results if r.name == "random"]
    low, high = wilson_interval(sum(r.exact for r in rand), len(rand))
    failed = [r for r in results if not r.exact]
    report = LevelReport(n, len(results), sum(r.exact for r in results), len(rand),
                         sum(r.exact for r in rand), low, high, sum(r.steps for r in results), seconds,
                         [_failure_summary(r) for r in failed])
    return report, (failed[0] if failed else None)


def _failure_summary(r: InstanceResult) -> dict:
    return {"name": r.name, "digits_a": len(r.a), "digits_b": len(r.b), "outcome": str(r.outcome),
            "verdict": r.verdict, "steps": r.steps, "answer_digits": r.answer_digits}


def level_record(report: LevelReport) -> dict:
    """The level as every report holds it: the counts, and the two verdicts."""
    return asdict(report) | {"robust": report.robust, "probabilistic": report.probabilistic}


def summarize(task: Task, levels: list[dict], stopped_by: str, cfg: EvalConfig) -> dict:
    """The JSON report: keys task, robust_max_digits, probabilistic_max_digits, levels, ..."""
    return {
        "task": task.name,
        "robust_max_digits": max_passing(levels, "robust"),
        "probabilistic_max_digits": max_passing(levels, "probabilistic"),
        "stopped_by": stopped_by,
        "mode": "rescaled" if cfg.rescale else "plain",
        "config": asdict(cfg),
        "levels": levels,
    }


def check_eval_lengths(task: Task, cfg: EvalConfig) -> None:
    """Refuse, before anything runs, a given length whose estimate is over the memory bound."""
    check_lengths(task, cfg, lambda n: level_estimate(task, n, cfg))


def run_protocol(task: Task, weights: DfstWeights | None, cfg: EvalConfig, *,
                 held_out: HeldOut | None = None, on_level: Callable[[int, int], None] | None = None,
                 on_steps: Callable[[int], None] | None = None) -> tuple[dict, InstanceResult | None]:
    """Evaluate every length of the ladder; returns the JSON report and the first failing instance.

    `weights=None` evaluates the task's expert automaton through the same engine (a sanity check).
    The ladder, its bounds and its stops are `dfst.protocol.ladder.climb`'s (stopped_by "failure",
    "time_budget", "memory", "max_digits" or "completed"); a given length over the memory bound is
    a DfstError before anything runs. `held_out`: the operand pairs the model was trained on, never
    tested (each level counts them as `excluded`; the report's `held_out` is how many there are).
    """
    first_failure: InstanceResult | None = None
    held_out = held_out or HeldOut()

    def run_level(n: int) -> dict:
        nonlocal first_failure
        instances = level_instances(task, n, cfg, held_out)  # drawn once, freed before the next length
        if on_level is not None:
            on_level(n, len(instances))
        report, failure = evaluate_level(task, weights, n, instances, cfg, on_steps)
        report.excluded = held_out.removed.get(n, 0)
        first_failure = first_failure or failure
        return level_record(report)

    start = time.perf_counter()
    levels, stopped_by = climb(task, cfg, run_level, lambda n: level_estimate(task, n, cfg))
    summary = summarize(task, levels, stopped_by, cfg) | {"held_out": len(held_out.pairs)}
    summary["seconds"] = round(time.perf_counter() - start, 3)
    return summary, first_failure
