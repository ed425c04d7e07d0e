"""The frozen suite trained with the default a user gets, and its table.

    python benchmarks/suite/run.py OUT --seeds 0-4              # train, evaluate, certify every run
    python benchmarks/suite/run.py OUT --seeds 0-2 --tasks xor2,eq3
    python benchmarks/suite/run.py OUT --table                  # the table of every run OUT holds

Each (task, seed) is the plain command a user runs, no per-task setting:
`dfst --tasks-file benchmarks/suite/tasks.py train TASK --seed S --out OUT/TASK-sS`, then
`dfst eval OUT/TASK-sS/model` at 10 to 10,000 digits (1,000 for a task whose run time grows faster
than linearly) and `dfst certify OUT/TASK-sS/extracted`; each command's JSON goes beside the run
(TASK-sS.train.json, .eval.json, .certify.json). A run whose files are there is not run again, so
the command resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().with_name("tasks.py")
DFST = [str(Path(sys.executable).with_name("dfst")), "--tasks-file", str(SUITE)]
LINEAR_LENGTHS, OTHER_LENGTHS = "10,100,1000,10000", "10,100,1000"


def suite_tasks() -> dict:
    """The suite's tasks by name, registered from its file."""
    from dfst.tasks import TASKS
    from dfst.tasks.user import load_tasks_file

    return {name: TASKS[name] for name in load_tasks_file(SUITE)}


def linear(task) -> bool:
    """Whether the task's run time grows linearly (10,000 digits is then its target, else 1,000)."""
    return task.time_growth(2000, 1000) < 3


def run_one(out: Path, name: str, seed: int, lengths: str) -> None:
    """Train, evaluate and certify one (task, seed), each step skipped when its JSON is there."""
    run = out / f"{name}-s{seed}"
    steps = [("train", ["train", name, "--seed", str(seed), "--out", str(run)]),
             ("eval", ["eval", str(run / "model"), "--digits", lengths]),
             ("certify", ["certify", str(run / "extracted")])]
    for step, args in steps:
        report = out / f"{run.name}.{step}.json"
        finished = step == "train" and (run / "summary.json").exists()  # dfst train refuses to redo it
        if finished or (report.exists() and report.stat().st_size):
            continue
        print(f"{run.name}: {step}", file=sys.stderr, flush=True)
        done = subprocess.run([*DFST, *args, "--json"], capture_output=True, text=True)
        (out / f"{run.name}.{step}.err").write_text(done.stderr)
        if done.returncode == 2:  # an error, not a verdict: the next steps have nothing to read
            print(f"{run.name}: {step} failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return
        report.write_text(done.stdout)


def row(out: Path, name: str, seed: int, task) -> str | None:
    """One run's line of the table (None: not trained yet)."""
    run = out / f"{name}-s{seed}"
    if not (run / "summary.json").exists():
        return None
    summary = json.loads((run / "summary.json").read_text())
    found = summary.get("agreement") or {}
    evaluated, certified = (read(out / f"{run.name}.{step}.json") for step in ("eval", "certify"))
    low, high = (found.get("checked") or {}).get("digits", ["-", "-"])
    kept = " -> ".join(str(n) for n in (found.get("data") or {}).get("samples", [summary["samples"]]))
    states = (summary.get("extracted") or {}).get("states", "-")
    return (f"| {name} | {seed} | {task.agent.d} | {kept} | {summary['traces']['total']:,} | {summary['d']} "
            f"| {states} | {found.get('stopped', '-')} | {low}-{high} "
            f"| {evaluated.get('robust_max_digits', '-')} | {certified.get('verdict', '-')} "
            f"| {summary['cpu_seconds']:.0f} |")


def read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() and path.stat().st_size else {}


def table(out: Path, tasks: dict, seeds: list[int]) -> str:
    """The markdown table of the runs in `out`, with the count robust at each task's target."""
    lines = ["| task | seed | expert states | PTOs (grown) | expert runs read | d | states read off "
             "| stopped | held out (digits) | RUN/model robust to | certify RUN/extracted | train CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    runs = reached = proved = 0
    for name, task in tasks.items():
        for seed in seeds:
            line = row(out, name, seed, task)
            if line is None:
                continue
            lines.append(line)
            runs += 1
            target = 10_000 if linear(task) else 1_000
            reached += (read(out / f"{name}-s{seed}.eval.json").get("robust_max_digits") or 0) >= target
            proved += read(out / f"{name}-s{seed}.certify.json").get("verdict") == "CERTIFIED"
    lines.append(f"\n{reached} of {runs} runs robust at their target (10,000 digits for a linear task, 1,000 "
                 f"otherwise); {proved} automata read off CERTIFIED for every length.")
    return "\n".join(lines)


def seed_list(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=seed_list, default=seed_list("0-4"), help="e.g. 0-4 or 3")
    parser.add_argument("--tasks", default=None, help="comma-separated (default: the whole suite)")
    parser.add_argument("--table", action="store_true", help="print the table of what OUT holds")
    args = parser.parse_args()
    tasks = suite_tasks()
    if args.tasks:
        tasks = {name: tasks[name] for name in args.tasks.split(",")}
    if not args.table:
        args.out.mkdir(parents=True, exist_ok=True)
        for seed in args.seeds:
            for name, task in tasks.items():
                run_one(args.out, name, seed, LINEAR_LENGTHS if linear(task) else OTHER_LENGTHS)
    print(table(args.out, tasks, args.seeds))


if __name__ == "__main__":
    main()
