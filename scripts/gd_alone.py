"""Gradient descent alone at the paper's sizes: a grid of training runs scored on their own weights
(no automaton read off, no re-fit), with what the read-off would have found beside them.

    python scripts/gd_alone.py OUT --d 12 --data default --lr 0.002,0.006,0.02,0.06 --seeds 0-2   the lr sweep
    python scripts/gd_alone.py OUT --lr 0.02 [--d 12,9,lb] [--data uniform,default,read,longer] [--seeds 0-4]
    python scripts/gd_alone.py OUT --report FIGURE.png      the table and the figure from OUT's points

`--task` (add2, add10, mult2, mult10; default add2), `--inits N` (4), `--shard i/n` (this process runs
every n-th cell from the i-th: two processes, two cores).

Every run: the published loss (MSE on the one-hot symbol and move), the published initialisation
(every A[x] the identity, B = C = 0) with its exact symmetry broken (A jittered by N(0, 0.01²): `init
jitter`), float32, h not normalised, no noise, no penalty, Adam with cosine decay over `--iters` (500K, the
paper's), full batch except `read` (minibatches of the paper's sample count). `--inits` initialisations
train side by side on a cell's data (dfst's restarts: the objective is their sum, so each one's
gradient and Adam state are its own) and each one's weights are measured: an independent run of
gradient descent alone, at a fraction of the CPU of running them one by one.
The data settings, at the paper's sample count and training length for the task (add2: 20 of ≤ 3
digits; add10: 225 of ≤ 3; mult2: 750 of ≤ 5):
  uniform   drawn uniformly (`--sampler uniform`)
  default   chosen by dfst's default sampler (`contexts`: the pool's most informative PTOs)
  read      every distinct trace the default read: its whole candidate pool and its validation PTOs
  longer    drawn uniformly, of up to twice the paper's training length
d: a number, or `lb` (the default data's lower bound on the states, `dfst.train.dsize`).

Every `--every` iterations the run pauses at its checkpoint and its weights are scored closed loop at
10, 100, 1,000 and 10,000 digits (the hard set and 10 random pairs a length, the training pairs held
out, h rescaled every step: scale never changes an argmax), at the end also at 100,000 where robust at
10,000; the automaton read off the weights (`dfst.extract`, fewest states) is counted against the
expert's states. Points go to OUT/points-SHARD.jsonl as measured (a re-run skips those there; the run
resumes bit-identically from its checkpoint); run directories, each with its config, to OUT/runs/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import torch

from dfst.data import SAMPLERS, load_dataset
from dfst.data.contexts import grown_pool
from dfst.data.pto import PtoDataset
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights
from dfst.model import INITS, DFSTConfig, Population
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.protocol.instances import HeldOut
from dfst.tasks import get_task
from dfst.train import train
from dfst.train.dsize import states_lower_bound
from dfst.train.restarts import restart_seed
from dfst.train.rundir import DATA_FILE, STATE_FILE
from dfst.train.state import load_train_state
from dfst.train.validation import distinct, oracle_dataset, validation_set

PAPER = {"add2": (20, 3), "add10": (225, 3), "mult2": (750, 5), "mult10": (10_000, 5)}  # samples, digits
DIGITS = (10, 100, 1000, 10000)


class Pause(Exception):
    """Raised from the progress callback once a checkpoint to measure is on disk."""


def default_data(task_name: str, seed: int) -> PtoDataset:
    samples, digits = PAPER[task_name]
    return SAMPLERS["contexts"](get_task(task_name), samples, digits, seed)


def read_data(task_name: str, seed: int) -> PtoDataset:
    """Every distinct trace the default sampler and its d-choice read: the candidate pool (its
    first batch drawn from the same stream as the sampler's) and the validation PTOs."""
    import numpy as np

    task = get_task(task_name)
    digits = PAPER[task_name][1]
    pool = grown_pool(task, digits, np.random.default_rng(seed), seed)[0]
    kept = default_data(task_name, seed)
    longest = max(max(len(a), len(b)) for a, b in kept.operands)  # as `train` chooses its validation
    validation = validation_set(task, longest, seed)
    instances = pool + kept_instances(kept) + kept_instances(validation)
    unique = distinct(instances)
    widest = max(max(len(i.a), len(i.b)) for i in unique)
    sampling = {"rule": "read", "min_digits": 1, "max_digits": widest, "queries": len(unique)}
    return oracle_dataset(task, unique, seed, sampling)


def kept_instances(data: PtoDataset) -> list:
    from dfst.tasks.base import Instance

    return [Instance(a, b, "read") for a, b in data.operands]


def lower_bound(task_name: str, seed: int) -> int:
    return states_lower_bound(default_data(task_name, seed))


def cell_config(task_name: str, d: int, lr: float, data: str, seed: int, iters: int, every: int,
                inits: int):
    from dfst.train.config import TrainConfig

    samples, digits = PAPER[task_name]
    sampler = "uniform" if data in ("uniform", "longer") else "contexts"
    return TrainConfig(task=task_name, samples=samples, max_digits=2 * digits if data == "longer" else digits,
                       seed=seed, sampler=sampler, d=d, lr=lr, init="jitter", normalize_h=False, noise=0.0,
                       loss="mse", forward="loop", engine="fused", restarts=inits, extract=False,
                       finetune=False, batch=samples if data == "read" else 0, iters=iters, eval_every=0,
                       checkpoint_every=every, log_every=1000)


def weights_at(run: Path, cfg):
    """Every initialisation's model in run/state.safetensors (the last checkpoint), and its iteration."""
    task = get_task(cfg.task)
    model = Population([INITS[cfg.init](DFSTConfig(len(task.alphabet), cfg.d, task.name),
                                        restart_seed(cfg.seed, r)) for r in range(cfg.restarts)])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=False)
    info = load_train_state(run / STATE_FILE, model, optimizer)
    return [model.member(r) for r in range(cfg.restarts)], info["iteration"]


def losses_at(run: Path, iteration: int) -> list[float | None]:
    """Each initialisation's training loss at `iteration`, from the run's metrics."""
    for line in (run / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("iteration") == iteration and "losses" in record:
            return record["losses"]
    return []


def states_read_off(model, data: PtoDataset, task) -> int | None:
    """States of the automaton `dfst.extract` reads off the weights (None: none explains the PTOs)."""
    from dfst.extract import extract

    try:
        return len(extract(model, data, agent=task.agent).agent.states)
    except DfstError:
        return None


def measure(model, run: Path, task, final: bool) -> dict:
    data = load_dataset(run / DATA_FILE)
    held_out = HeldOut(data.operands)
    weights = DfstWeights.of(*model.numpy_weights())
    report, _ = run_protocol(task, weights, EvalConfig(DIGITS, random=10, rescale=True), held_out=held_out)
    if final and report["robust_max_digits"] >= DIGITS[-1]:
        report, _ = run_protocol(task, weights, EvalConfig(DIGITS + (100_000,), random=10, rescale=True),
                                 held_out=HeldOut(data.operands))
    levels = {lv["digits"]: f"{lv['exact']}/{lv['instances']}" for lv in report["levels"]}
    return {"robust": report["robust_max_digits"], "probabilistic": report["probabilistic_max_digits"],
            "levels": levels, "states": states_read_off(model, data, task), "expert_states": task.agent.d,
            "traces": data.samples, "distinct": len(set(data.operands))}


def run_cell(out: Path, cell: dict, args, done: set, points: Path) -> None:
    cfg = cell_config(cell["task"], cell["d"], cell["lr"], cell["data"], cell["seed"], args.iters, args.every,
                      args.inits)
    run = out / "runs" / cell_name(cell)
    task = get_task(cell["task"])
    given = read_data(cell["task"], cell["seed"]) if cell["data"] == "read" else None
    key = cell_name(cell)

    def pause(record: dict) -> None:
        it = record.get("iteration", 0)
        if "phase" not in record and it % args.every == 0 and it < cfg.iters and (key, it) not in done:
            raise Pause

    while True:
        start = time.process_time()
        with contextlib.suppress(Pause):
            train(cfg, run, data=given, resume=True, progress=pause, command="scripts/gd_alone.py")
        models, iteration = weights_at(run, cfg)
        if (key, iteration) not in done:
            trained_s = round(time.process_time() - start, 1)
            losses = losses_at(run, iteration)
            for init, model in enumerate(models):
                point = {**cell, "init": init, "inits": len(models), "iteration": iteration,
                         "loss": losses[init] if init < len(losses) else None, "train_cpu_s": trained_s,
                         **measure(model, run, task, final=iteration >= cfg.iters)}
                with open(points, "a") as f:
                    f.write(json.dumps(point) + "\n")
                print(json.dumps(point), flush=True)
            done.add((key, iteration))
        if iteration >= cfg.iters:
            return


def cell_name(cell: dict) -> str:
    return f"{cell['task']}-d{cell['d']}-lr{cell['lr']}-{cell['data']}-s{cell['seed']}"


def plan(args) -> list[dict]:
    """The cells, seed by seed (the first seeds of every setting before the later ones)."""
    cells = []
    for seed in args.seeds:
        for d_text in args.d.split(","):
            d = lower_bound(args.task, seed) if d_text == "lb" else int(d_text)
            cells += [{"task": args.task, "d": d, "lr": lr, "data": data, "seed": seed}
                      for lr in args.lr for data in args.data.split(",")]
    return cells


def seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def read_points(out: Path) -> list[dict]:
    """Every point measured under OUT (none in a fresh OUT)."""
    files = sorted(out.glob("points-*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--task", default="add2", choices=sorted(PAPER))
    parser.add_argument("--lr", type=lambda text: [float(x) for x in text.split(",")], default=[0.02])
    parser.add_argument("--d", default="12,9,lb")
    parser.add_argument("--data", default="default,uniform,read,longer")
    parser.add_argument("--seeds", type=seeds, default=None)
    parser.add_argument("--iters", type=int, default=500_000)
    parser.add_argument("--every", type=int, default=100_000)
    parser.add_argument("--inits", type=int, default=4,
                        help="initialisations trained side by side on a cell's data, each measured")
    parser.add_argument("--shard", default="0/1", help="i/n: this process runs every n-th cell from the i-th")
    parser.add_argument("--report", type=Path, help="draw OUT's points into this figure, print the table")
    args = parser.parse_args()
    if args.report:
        from gd_alone_report import report

        if not (measured := read_points(args.out)):
            raise SystemExit(f"gd_alone: no points-*.jsonl under {args.out}")
        report(measured, args.report)
        return
    args.seeds = args.seeds or seeds("0-4")
    index, _, count = args.shard.partition("/")
    args.out.mkdir(parents=True, exist_ok=True)
    points = args.out / f"points-{index}.jsonl"
    done = {(cell_name(p), p["iteration"]) for p in read_points(args.out)}
    for cell in plan(args)[int(index)::int(count)]:
        run_cell(args.out, cell, args, done, points)


if __name__ == "__main__":
    main()
