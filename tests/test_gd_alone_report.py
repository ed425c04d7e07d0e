"""scripts/gd_alone_report.py, the table of the gradient-descent-alone study: each run counted once, at
its last checkpoint, and the states read off counted against the expert's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gd_alone_report.py"
spec = importlib.util.spec_from_file_location("gd_alone_report", SCRIPT)
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def point(seed: int, init: int, iteration: int, robust: int, states: int | None) -> dict:
    return {"task": "add2", "d": 12, "lr": 0.02, "data": "default", "seed": seed, "init": init, "inits": 2,
            "iteration": iteration, "loss": 1e-12, "train_cpu_s": 10.0, "robust": robust,
            "levels": {"100": "3/4" if robust < 100 else "4/4"}, "states": states, "expert_states": 9,
            "traces": 20, "distinct": 18}


def test_each_run_counts_once_at_its_last_checkpoint():
    points = [point(0, 0, 100_000, 0, 12), point(0, 0, 200_000, 100_000, 9),
              point(0, 1, 200_000, 10, 11), point(1, 0, 200_000, 0, None)]
    [row] = [line for line in report.table(points).splitlines() if line.startswith("| add2")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "3 (2 x 2)" and cells[7] == "2 / 1 / 1" and cells[8] == "100,000"
    assert cells[11] == "1 / 1 / 0 / 1"
    [states] = [line for line in report.states_table(points).splitlines() if line.startswith("| 12")]
    assert [c.strip() for c in states.strip("|").split("|")][3:] == ["1 / 0", "0 / 1 / 0 / 1"]


def test_robust_length_against_iterations_counts_every_checkpoint():
    points = [point(0, 0, 100_000, 0, 12), point(0, 0, 200_000, 100_000, 9), point(0, 1, 200_000, 10, 11)]
    rows = [line for line in report.iterations_table(points).splitlines() if line.startswith("| 12")]
    assert [[c.strip() for c in r.strip("|").split("|")][3:] for r in rows] == [
        ["100,000", "1", "0 / 0 / 0"], ["200,000", "2", "2 / 1 / 1"]]
