"""The length-generalisation protocol.

At each length N: the task's hard structured instances with N digits plus R random pairs of N-digit
operands (default R = 10, seeded). Robust at N: every instance exact. Probabilistic at N: the random
pairs only, reported with a 95% Wilson interval. `robust_max_digits` and `probabilistic_max_digits`
are the largest tested N such that every tested length up to N passed.

`--until-fail` climbs a geometric ladder of N until the first failure, a time budget or the memory
bound and says which stopped it. The memory a length needs is estimated before it runs
(`dfst.tasks.budget`): a given length over `max_memory` is refused before anything is evaluated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights, InstanceResult, rollout
from dfst.io.limits import default_max_memory
from dfst.tasks.base import Task
from dfst.tasks.budget import Estimate, check_memory, estimate_eval, hard_digits


@dataclass(frozen=True)
class EvalConfig:
    digits: tuple[int, ...] = (10, 100, 1000)
    random: int = 10
    hard: bool = True
    seed: int = 0
    rescale: bool = False
    until_fail: bool = False
    ladder_factor: float = 2.0
    max_digits: int = 10**7           # the ladder never goes beyond this
    time_budget: float = 600.0        # seconds, for --until-fail
    max_memory: int | None = None     # bytes one length may plan to use; None: default_max_memory()

    def __post_init__(self) -> None:
        if self.random < 0:
            raise DfstError(f"random pairs must be >= 0, got {self.random}")
        if self.random == 0 and not self.hard:
            raise DfstError("nothing to evaluate: no random pairs and no hard instances")
        if not self.digits or min(self.digits) < 1:
            raise DfstError(f"lengths must be >= 1, got {list(self.digits)}")
        if self.max_memory is not None and self.max_memory < 1:
            raise DfstError(f"the memory bound must be at least 1 byte, got {self.max_memory}")


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

    @property
    def robust(self) -> bool:
        return self.exact == self.instances

    @property
    def probabilistic(self) -> bool:
        """All random pairs exact; with no random pairs there is nothing to claim."""
        return self.random > 0 and self.random_exact == self.random


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion."""
    if trials == 0:
        return 0.0, 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    # The bounds are exact at the edges; rounding must not leave the observed rate outside.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def level_instances(task: Task, n: int, cfg: EvalConfig) -> list:
    hard = task.hard_instances(n) if cfg.hard else []
    return hard + task.random_instances(n, cfg.random, seed=cfg.seed + n)


def level_estimate(task: Task, n: int, cfg: EvalConfig) -> Estimate:
    """What one length of the protocol will hold (`dfst.tasks.budget.estimate_eval`)."""
    return estimate_eval(task, n, random=cfg.random, hard=cfg.hard)


def check_lengths(task: Task, cfg: EvalConfig) -> None:
    """Refuse, before any evaluation, a given length whose estimate is over the memory bound."""
    n = max(cfg.digits)
    estimate = level_estimate(task, n, cfg)
    count = cfg.random + (hard_digits(task, n)[0] if cfg.hard else 0)
    check_memory(estimate, _max_memory(cfg), f"--digits {n:,} ({count} instances)")


def _max_memory(cfg: EvalConfig) -> int:
    return cfg.max_memory or default_max_memory()


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


def ladder(cfg: EvalConfig) -> list[int]:
    """The lengths to test: the given ones, then (with until_fail) a geometric climb."""
    levels = sorted(set(cfg.digits))
    if cfg.until_fail:
        n = levels[-1]
        while n < cfg.max_digits:
            n = min(cfg.max_digits, max(n + 1, round(n * cfg.ladder_factor)))
            levels.append(n)
    return levels


def summarize(task: Task, levels: list[LevelReport], stopped_by: str, cfg: EvalConfig) -> dict:
    """The JSON report: keys task, robust_max_digits, probabilistic_max_digits, levels, ..."""
    return {
        "task": task.name,
        "robust_max_digits": _max_passing(levels, "robust"),
        "probabilistic_max_digits": _max_passing(levels, "probabilistic"),
        "stopped_by": stopped_by,
        "mode": "rescaled" if cfg.rescale else "plain",
        "config": asdict(cfg),
        "levels": [asdict(lv) | {"robust": lv.robust, "probabilistic": lv.probabilistic}
                   for lv in levels],
    }


def _max_passing(levels: list[LevelReport], attr: str) -> int:
    best = 0
    for lv in sorted(levels, key=lambda lv: lv.digits):
        if not getattr(lv, attr):
            break
        best = lv.digits
    return best


def run_protocol(task: Task, weights: DfstWeights | None, cfg: EvalConfig, *,
                 on_level: Callable[[int, int], None] | None = None,
                 on_steps: Callable[[int], None] | None = None) -> tuple[dict, InstanceResult | None]:
    """Evaluate every length of the ladder; returns the JSON report and the first failing instance.

    `weights=None` evaluates the task's expert automaton through the same engine (a sanity check).
    With until_fail, stops at the first length that is not robust, or before a length whose
    predicted time (from the last one, grown as the task's step bound: `Task.time_growth`)
    would exceed the time budget, or whose memory estimate is over the bound (stopped_by "memory").
    A given length over the bound is a DfstError before anything runs.
    """
    check_lengths(task, cfg)
    reports, first_failure, stopped_by = [], None, "completed"
    start = time.perf_counter()
    for n in ladder(cfg):
        if n > max(cfg.digits) and level_estimate(task, n, cfg).bytes > _max_memory(cfg):
            stopped_by = "memory"  # a rung of the climb: stop where the memory ends, do not refuse
            break
        if cfg.until_fail and reports:
            last = reports[-1]
            predicted = last.seconds * task.time_growth(n, last.digits)
            if time.perf_counter() - start + predicted > cfg.time_budget:
                stopped_by = "time_budget"
                break
        instances = level_instances(task, n, cfg)  # drawn once: at 10^7 digits they are ~1 GB
        if on_level is not None:
            on_level(n, len(instances))
        report, failure = evaluate_level(task, weights, n, instances, cfg, on_steps)
        del instances  # before the next length draws its own (twice as long)
        reports.append(report)
        first_failure = first_failure or failure
        if cfg.until_fail and not report.robust:
            stopped_by = "failure"
            break
    else:
        stopped_by = "max_digits" if cfg.until_fail else "completed"
    summary = summarize(task, reports, stopped_by, cfg)
    summary["seconds"] = round(time.perf_counter() - start, 3)
    return summary, first_failure
