"""The built-in tasks trained with the general recipe (what a task without a recipe of its own gets),
then evaluated up to each task's target: how far "no per-task recipe" holds on them.

    python scripts/general_on_builtin.py OUT add2:0 sub2:0 ...     train and evaluate (resumable)
    python scripts/general_on_builtin.py OUT --table               the table of OUT's finished runs

Layout: OUT/TASK-sS (the run), OUT/TASK-sS.eval.json (`dfst eval RUN --json`), OUT/probe.jsonl.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from dfst.train.loop import train
from dfst.train.recipes import GENERAL, TARGET_DIGITS

LENGTHS = (10, 100, 1000, 10_000, 100_000)


def run(out: Path, task: str, seed: int) -> None:
    """Train TASK at SEED with the general recipe into OUT/TASK-sSEED, then evaluate to its target."""
    name = f"{task}-s{seed}"
    if (out / f"{name}.eval.json").exists():
        return
    summary = train(replace(GENERAL, task=task, seed=seed), out / name)
    digits = ",".join(str(n) for n in LENGTHS if n <= TARGET_DIGITS[task])
    dfst = Path(sys.executable).with_name("dfst")
    done = subprocess.run([str(dfst), "eval", str(out / name), "--digits", digits, "--json"],
                          capture_output=True, text=True)
    (out / f"{name}.eval.json").write_text(done.stdout or json.dumps({"error": done.stderr[-2000:]}))
    with open(out / "probe.jsonl", "a") as log:
        record = {"task": task, "seed": seed, "cpu_s": summary.get("cpu_seconds"), "d": summary.get("d"),
                  "samples": summary.get("samples"), "eval_rc": done.returncode,
                  "finished": time.strftime("%Y-%m-%d %H:%M")}
        log.write(json.dumps(record) + "\n")


def table(out: Path) -> str:
    """The markdown table of OUT's finished runs."""
    lines = ["| task | seed | PTOs (grown) | expert runs read | d | stopped | RUN/model robust to | target "
             "| train CPU s |", "|---|---|---|---|---|---|---|---|---|"]
    reached = runs = 0
    for line in (out / "probe.jsonl").read_text().splitlines():
        row = json.loads(line)
        name = f"{row['task']}-s{row['seed']}"
        summary = json.loads((out / name / "summary.json").read_text())
        robust = json.loads((out / f"{name}.eval.json").read_text() or "{}").get("robust_max_digits") or 0
        found = summary.get("agreement") or {}
        grown = " -> ".join(str(n) for n in found.get("data", {}).get("samples", [summary["samples"]]))
        target = TARGET_DIGITS[row["task"]]
        runs, reached = runs + 1, reached + (robust >= target)
        lines.append(f"| {row['task']} | {row['seed']} | {grown} | {summary['traces']['total']:,} | "
                     f"{summary['d']} | {found.get('stopped')} | {robust} | {target} "
                     f"| {summary['cpu_seconds']:.0f} |")
    return "\n".join(lines) + f"\n\n{reached} of {runs} runs robust at their task's target."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", nargs="*", help="TASK:SEED ...")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.runs:
        task, seed = spec.split(":")
        run(args.out, task, int(seed))


if __name__ == "__main__":
    main()
