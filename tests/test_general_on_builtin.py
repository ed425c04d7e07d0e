"""scripts/general_on_builtin.py's table: each finished run once, robust against its task's target."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "general_on_builtin.py"
spec = importlib.util.spec_from_file_location("general_on_builtin", SCRIPT)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def finished(out: Path, task: str, seed: int, robust: int, samples: list[int]) -> None:
    name = f"{task}-s{seed}"
    (out / name).mkdir()
    summary = {"samples": samples[-1], "d": 6, "cpu_seconds": 41.6, "traces": {"total": 4381},
               "agreement": {"stopped": "agreed", "data": {"samples": samples}}}
    (out / name / "summary.json").write_text(json.dumps(summary))
    (out / f"{name}.eval.json").write_text(json.dumps({"robust_max_digits": robust}))
    with open(out / "probe.jsonl", "a") as log:
        log.write(json.dumps({"task": task, "seed": seed}) + "\n")


def test_the_table_counts_the_runs_robust_at_their_target(tmp_path):
    finished(tmp_path, "add2", 0, 100_000, [20])
    finished(tmp_path, "sub2", 1, 10_000, [20, 40, 80])  # short of sub2's 100,000
    finished(tmp_path, "reverse2", 0, 1000, [20, 40])  # reverse2's target: 1,000
    text = probe.table(tmp_path)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| task")]
    assert [row[2] for row in rows] == ["20", "20 -> 40 -> 80", "20 -> 40"]
    assert [row[6:8] for row in rows] == [["100000", "100000"], ["10000", "100000"], ["1000", "1000"]]
    assert text.endswith("2 of 3 runs robust at their task's target.")
