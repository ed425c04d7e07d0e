"""The protocol's one ladder loop: every length of a config in turn, and why it stopped.

A model is evaluated one length at a time by a `run_level(n) -> level` that the caller supplies (a
DFST on dfst's engine, or any answerer through `dfst.protocol.scorer`); a level is a dict with at
least "digits", "robust" and "seconds". The loop owns everything else the protocol decides: the
lengths (`ladder`), the memory a length may plan to hold (checked before anything runs for a given
length, a stop for a rung of the climb), the time budget (read on the caller's clock), the stop at
the first failure of `--until-fail`, and the caller's own stops.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dfst.errors import DfstError
from dfst.io.limits import default_max_memory
from dfst.protocol.config import EvalConfig
from dfst.tasks.base import Task
from dfst.tasks.budget import Estimate, check_memory, hard_digits

RunLevel = Callable[[int], dict]
Stop = Callable[[list[dict]], str | None]  # (the levels so far) -> why to stop here, or None


def ladder(cfg: EvalConfig) -> list[int]:
    """The lengths to test: the given ones, then (with until_fail) a geometric climb."""
    levels = sorted(set(cfg.digits))
    if cfg.until_fail:
        n = levels[-1]
        while n < cfg.max_digits:
            n = min(cfg.max_digits, max(n + 1, round(n * cfg.ladder_factor)))
            levels.append(n)
    return levels


def max_memory(cfg: EvalConfig) -> int:
    return cfg.max_memory or default_max_memory()


def check_lengths(task: Task, cfg: EvalConfig, estimate: Callable[[int], Estimate]) -> None:
    """Refuse, before anything is evaluated, a given length whose `estimate` is over the bound."""
    n = max(cfg.digits)
    count = cfg.random + (hard_digits(task, n)[0] if cfg.hard else 0)
    check_memory(estimate(n), max_memory(cfg), f"--digits {n:,} ({count} instances)")


def climb(task: Task, cfg: EvalConfig, run_level: RunLevel, estimate: Callable[[int], Estimate], *,
          growth: Callable[[int, int], float] | None = None,
          before: Callable[[int], str | None] | None = None,
          after: Stop | None = None,
          clock: Callable[[], float] = time.perf_counter) -> tuple[list[dict], str, str | None]:
    """(the levels run, why the ladder stopped, the error that stopped it or None). A DfstError at
    one length (a task's answer function that fails at 10,000 digits, a model that crashes) stops
    the ladder there with stopped_by "error", keeping every length already run. `estimate(n)`: the
    memory length n plans to hold;
    `growth(n, last)`: how much longer length n takes than the last one run (default: the task's
    step bound, `Task.time_growth`); `before(n)` and `after(levels)`: the caller's own stops, a
    reason or None; `clock`: the seconds the time budget counts (default: the wall's;
    `dfst.protocol.clock.alone_seconds` for dfst's engine). A given length over the memory bound is
    a DfstError before anything runs."""
    check_lengths(task, cfg, estimate)
    growth = growth or task.time_growth
    levels: list[dict] = []
    start = clock()
    last_seconds = 0.0  # the last length's seconds on `clock`
    for n in ladder(cfg):
        reason = _stop_before(n, cfg, levels, estimate, growth, clock() - start, last_seconds, before)
        if reason is not None:
            return levels, reason, None
        level_start = clock()
        try:
            levels.append(run_level(n))
        except DfstError as exc:
            return levels, "error", f"at {n:,} digits: {exc}"
        last_seconds = clock() - level_start
        if cfg.until_fail and not levels[-1]["robust"]:
            return levels, "failure", None
        reason = after(levels) if after is not None else None
        if reason is not None:
            return levels, reason, None
    return levels, "max_digits" if cfg.until_fail else "completed", None


def _stop_before(n: int, cfg: EvalConfig, levels: list[dict], estimate: Callable[[int], Estimate],
                 growth: Callable[[int, int], float], elapsed: float, last_seconds: float,
                 before: Callable[[int], str | None] | None) -> str | None:
    """"memory" for a rung of the climb over the bound (a rung is not refused: the climb ends where
    the memory does), the caller's reason, "time_budget" for a length predicted, from the last one,
    to overrun it (`elapsed`, `last_seconds`: on the climb's clock)."""
    if n > max(cfg.digits) and estimate(n).bytes > max_memory(cfg):
        return "memory"
    if before is not None and (reason := before(n)) is not None:
        return reason
    if cfg.budget is not None and levels and \
            elapsed + last_seconds * growth(n, levels[-1]["digits"]) > cfg.budget:
        return "time_budget"
    return None


def max_passing(levels: list[dict], key: str) -> int:
    """The largest length with every length up to it passing `key` ("robust" or "probabilistic")."""
    best = 0
    for level in sorted(levels, key=lambda level: level["digits"]):
        if not level[key]:
            break
        best = level["digits"]
    return best
