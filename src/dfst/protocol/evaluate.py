"""A DFST (or an automaton compiled to one) under the protocol, on dfst's own engine.

At each length N: the task's hard structured instances with N digits plus R random pairs of N-digit
operands (default R = 10, seeded; `dfst.protocol.instances.level_instances`). Robust at N: every
instance exact. Probabilistic at N: the random pairs only, reported with a 95% Wilson interval.
`robust_max_digits` and `probabilistic_max_digits` are the largest tested N such that every tested
length up to N passed. The lengths, the memory and time bounds and the stops are the one ladder
loop's (`dfst.protocol.ladder.climb`); here a length is run by `rollout` in parallel, with the steps
counted for the progress display and the first failing instance kept for `dfst replay`, and the time
budget counts the time the evaluation would take alone on this machine (`dfst.protocol.clock`), so
that other jobs on the cores never cut a climb short.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict

from dfst.grid.rollout import DfstWeights, InstanceResult, rollout
from dfst.protocol.clock import alone_seconds
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut, level_instances
from dfst.protocol.ladder import check_lengths, climb, max_passing
from dfst.protocol.tally import Level
from dfst.tasks.base import Task
from dfst.tasks.budget import Estimate, estimate_eval


def level_estimate(task: Task, n: int, cfg: EvalConfig) -> Estimate:
    """What one length of the protocol will hold (`dfst.tasks.budget.estimate_eval`)."""
    return estimate_eval(task, n, random=cfg.random, hard=cfg.hard)


def evaluate_level(
    task: Task, weights: DfstWeights | None, n: int, instances: list, cfg: EvalConfig,
    on_steps: Callable[[int], None] | None = None,
) -> tuple[Level, float, InstanceResult | None]:
    """Run one length; returns its record, the seconds it took and the first failing instance
    (or None), kept whole for `dfst replay`."""
    start = time.perf_counter()
    results = rollout(task, instances, weights=weights, rescale=cfg.rescale, on_steps=on_steps)
    seconds = time.perf_counter() - start
    level = Level(n, steps=sum(r.steps for r in results))
    for i, r in enumerate(results):
        level.count(i, r, r.exact, r.verdict, lambda r=r: (task.expected(r), r.answer))
    return level, seconds, next((r for r in results if not r.exact), None)


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
    "time_budget", "memory", "max_digits", "completed" or "error", with the report's "error" saying
    which length failed how, the lengths before it kept); a given length over the memory bound is
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
        level, seconds, failure = evaluate_level(task, weights, n, instances, cfg, on_steps)
        level.excluded = held_out.removed.get(n, 0)
        first_failure = first_failure or failure
        return level.record(seconds)

    start = time.perf_counter()
    levels, stopped_by, error = climb(task, cfg, run_level, lambda n: level_estimate(task, n, cfg),
                                      clock=alone_seconds)
    summary = summarize(task, levels, stopped_by, cfg) | {"held_out": len(held_out.pairs)}
    if error is not None:  # the lengths before it are kept; the CLI says it and exits 2
        summary["error"] = error
    summary["seconds"] = round(time.perf_counter() - start, 3)
    return summary, first_failure
