"""Train every task over seeds with its recipe, evaluate with the protocol, store and tabulate.

Per (task, seed): `dfst.train` with `recipes.recipe(task, seed)` into RUNS/<task>/s<seed>, then the
length-generalisation protocol (hard instances + 10 random pairs per length, h rescaled, lengths 10,
100, 1,000, then ×10 until the first failure or the task's target length) on two models: the trained
DFST (model/) and the automaton read off it (extracted/, an exact DFST of the same k and d at
most). Each becomes a result JSON in the schema of `dfst table` (systems "DFST" and
"DFST (extracted)"). A seed whose results exist is not trained again.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from dfst.baselines.common import BaselineResult, hardware
from dfst.checkpoint import load_checkpoint
from dfst.evaluate import EvalConfig, run_protocol
from dfst.io import write_atomic
from dfst.recipes import TARGET_DIGITS, recipe
from dfst.rollout import DfstWeights
from dfst.tasks import get_task
from dfst.train import train

SYSTEMS = {"DFST": "model", "DFST (extracted)": "extracted"}


def result_path(results: Path, task: str, seed: int, system: str) -> Path:
    suffix = "" if system == "DFST" else "-extracted"
    return results / f"{task}{suffix}-s{seed}.json"


def evaluate_checkpoint(directory: Path, task: str, time_budget: float) -> tuple[dict, int]:
    """The protocol up to the task's target; returns the report and the first failing length (0: none)."""
    model, _ = load_checkpoint(directory, expect_task=task)
    cfg = EvalConfig(digits=(10, 100, 1000), random=10, rescale=True, until_fail=True, ladder_factor=10.0,
                     max_digits=TARGET_DIGITS[task], time_budget=time_budget)
    report, _ = run_protocol(get_task(task), DfstWeights.of(*model.numpy_weights()), cfg)
    failing = next((lv["digits"] for lv in report["levels"] if not lv["robust"]), 0)
    return report, failing


def reproduce_seed(task: str, seed: int, runs: Path, results: Path, *, time_budget: float = 300.0,
                   overrides: dict | None = None) -> list[dict]:
    """Train and evaluate one seed (or read its stored results); returns its result records."""
    paths = {system: result_path(results, task, seed, system) for system in SYSTEMS}
    if all(p.exists() for p in paths.values()):
        return [json.loads(p.read_text()) for p in paths.values()]
    cfg = recipe(task, seed, **(overrides or {}))
    start = time.process_time()
    summary = train(cfg, runs / task / f"s{seed}", resume=True, command=f"dfst reproduce --tasks {task}")
    # the run's own count covers its resumed segments too; a run from before it existed: measure here
    cpu = summary.get("cpu_seconds", time.process_time() - start)
    records = []
    for system, sub in SYSTEMS.items():
        directory = runs / task / f"s{seed}" / sub
        report, failing = evaluate_checkpoint(directory, task, time_budget) if directory.exists() else ({}, 0)
        details = {"first_failing_digits": failing, "stopped_by": report.get("stopped_by", "no_model"),
                   "target_digits": TARGET_DIGITS[task], "train_cpu_seconds": round(cpu, 1),
                   "iterations": summary["iterations"], "restart": summary["restarts"]["chosen"],
                   "d": summary["d"], "extracted": summary.get("extracted")}
        record = BaselineResult(
            system=system, task=task, seed=seed, samples=summary["samples"], params=summary["params"],
            max_train_digits=cfg.max_digits, robust_lg=report.get("robust_max_digits", 0),
            probabilistic_lg=report.get("probabilistic_max_digits", 0), train_seconds=round(cpu, 1),
            hardware=hardware(), levels=report.get("levels", []), config=asdict(cfg), details=details,
            notes="exact automaton read off the trained DFST" if sub == "extracted" else "").to_json()
        paths[system].parent.mkdir(parents=True, exist_ok=True)
        write_atomic(paths[system], (json.dumps(record, indent=1) + "\n").encode())
        records.append(record)
    return records


def reproduce(plan: dict[str, list[int]], runs: Path, results: Path, *, time_budget: float = 300.0,
              overrides: dict | None = None, on_seed: Callable[[str, int, list[dict]], None] | None = None
              ) -> list[dict]:
    """Every task of `plan` over its seeds; returns the summary rows of `summary_rows`."""
    records = []
    for task, seeds in plan.items():
        for seed in seeds:
            got = reproduce_seed(task, seed, runs, results, time_budget=time_budget, overrides=overrides)
            records += got
            if on_seed is not None:
                on_seed(task, seed, got)
    return summary_rows(records)


def summary_rows(records: list[dict]) -> list[dict]:
    """One row per (task, system): successes over seeds, robust / probabilistic LG, CPU per seed."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["task"], r["system"]), []).append(r)
    rows = []
    for (task, system), runs in groups.items():
        target = TARGET_DIGITS[task]
        failing = [r["details"]["first_failing_digits"] for r in runs if r["details"]["first_failing_digits"]]
        rows.append({
            "task": task, "system": system, "seeds": len(runs), "samples": runs[0]["samples"],
            "max_train_digits": runs[0]["max_train_digits"], "d": runs[0]["details"]["d"],
            "params": runs[0]["params"], "target_digits": target,
            "successes": sum(r["robust_lg"] >= target for r in runs),
            "robust_lg_median": statistics.median(r["robust_lg"] for r in runs),
            "robust_lg_min": min(r["robust_lg"] for r in runs),
            "probabilistic_lg_median": statistics.median(r["probabilistic_lg"] for r in runs),
            "first_failing_min": min(failing) if failing else None,
            "cpu_seconds_median": round(statistics.median(r["train_seconds"] for r in runs), 1),
            "cpu_seconds_max": round(max(r["train_seconds"] for r in runs), 1),
        })
    return rows
