"""Closed-loop robust length of the raw weights against iterations, per phase (the plot of
docs/research/training.md).

    python scripts/finetune_curve.py RUN OUT.png [--digits 10,100,...] [--iters 0,100,...] [--force]

RUN is a finished `dfst train` run (trained with --no-finetune, or with the phase: its trained/ is
read). Training: the robust length that training's own evaluations recorded in RUN/metrics.jsonl
(h rescaled, the raw weights and the automaton read off them). Fine-tuning: the centres phase run
from the trained weights for each iteration count of --iters (L-BFGS is deterministic, so each is a
prefix of the longest), then the raw weights evaluated closed loop with plain h. Writes OUT.png and
OUT.json (the points). About 1 CPU minute for add2 at the defaults.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfst.grid.rollout import DfstWeights
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.tasks import get_task
from dfst.train.finetune import FinetuneConfig, read_run, tune


def training_points(run: Path) -> list[dict]:
    points = []
    for line in (run / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if isinstance(record.get("eval"), dict):
            found = record["eval"].get("extracted") or {}
            points.append({"iteration": record["iteration"], "raw": record["eval"]["robust_max_digits"],
                           "extracted": found.get("robust_max_digits")})
    return points


def finetune_points(run: Path, counts: list[int], digits: tuple[int, ...]) -> list[dict]:
    points = []
    for count in counts:
        task_name, model, data = read_run(run)
        task = get_task(task_name)
        model, info = tune(model, data, task, FinetuneConfig(centre_iters=count))
        report, _ = run_protocol(task, DfstWeights.of(*model.numpy_weights()), EvalConfig(digits, random=10))
        points.append({"iteration": count, "raw": report["robust_max_digits"],
                       "residual_max": info["after"]["residual_max"]})
        print(points[-1], flush=True)
    return points


def plot(train: list[dict], tune_points: list[dict], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    floor = 1  # robust length 0 drawn at 1 on the log axis
    steps = [p["iteration"] for p in train]
    left.plot(steps, [max(p["raw"], floor) for p in train], "o-", label="raw weights")
    left.plot(steps, [max(p["extracted"] or 0, floor) for p in train], "s--",
              label="automaton read off (eval capped)")
    left.set(title="training (Adam, h rescaled)", xlabel="iteration",
             ylabel="robust length (digits; 0 drawn at 1)", yscale="log")
    left.legend()
    right.plot([p["iteration"] for p in tune_points], [max(p["raw"], floor) for p in tune_points], "o-",
               label="raw weights (plain h)")
    right.set(title="fine-tuning (L-BFGS at the centres)", xlabel="iteration", xscale="symlog")
    twin = right.twinx()
    twin.plot([p["iteration"] for p in tune_points], [p["residual_max"] for p in tune_points], "x:",
              color="gray", label="largest residual")
    twin.set(yscale="log", ylabel="largest |A[x]c_q - c_q'|")
    right.legend(loc="center right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--digits", default="10,100,1000,10000,100000")
    parser.add_argument("--iters", default="0,25,50,100,200,300,500,1000,2000,3000")
    parser.add_argument("--force", action="store_true", help="replace OUT.png and OUT.json if they exist")
    args = parser.parse_args()
    for path in (args.out, args.out.with_suffix(".json")):  # checked before the minutes of work
        if path.is_symlink() or (path.exists() and not path.is_file()):
            parser.error(f"{path} is not a regular file; it is never replaced")
        if path.exists() and not args.force:
            parser.error(f"{path} exists (pass --force to replace it)")
    digits = tuple(int(d) for d in args.digits.split(","))
    counts = [int(n) for n in args.iters.split(",")]
    train, tuned = training_points(args.run), finetune_points(args.run, counts, digits)
    plot(train, tuned, f"{args.run.name}: raw weights' robust length per phase", args.out)
    points = {"training": train, "finetune": tuned}
    args.out.with_suffix(".json").write_text(json.dumps(points, indent=1) + "\n")


if __name__ == "__main__":
    main()
