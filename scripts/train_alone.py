"""Gradient descent alone at the paper's scale: add2 trained for the published 500K iterations with
training's own weights only (no extraction, no fine-tuning), evaluated every 25K iterations.

    python scripts/train_alone.py OUT [--seeds 0-4] [--settings jitter,noise,noise-l1]
                                      [--iters 500000] [--every 25000] [--digits 10,100,1000,10000]

Settings (20 cover samples of at most 3 digits, one restart, h not normalised, lr 0.02 cosine, the
fused engine on the loop forward):
  jitter     the published initialisation with its symmetry broken (identity + N(0, 0.01²))
  noise      that plus σ = 0.05 noise on h
  noise-l1   that plus L1 1e-5 on A (docs/research/training.md section 4's setting)

Every `--every` iterations the run is stopped at its checkpoint, its weights are evaluated closed loop
(h rescaled every step: training's protocol) at each length, and the consistency residual is measured
against the centres of the automaton read off (`dfst.train.anchors`: the largest |A[x]c_q - c_q'|,
centres the mean directions of each block's noise-free states), then training resumes from the
checkpoint (bit-identical to an uninterrupted run). Points go to OUT/points.jsonl as they are measured
(a re-run skips the ones there), and the run directories to OUT/runs/.

    python scripts/train_alone.py OUT --plot FIGURE.png

draws the points (robust length against iterations, and against the residual) and prints their table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import torch

from dfst.data import load_dataset
from dfst.errors import DfstError
from dfst.grid.rollout import DfstWeights
from dfst.model import INITS, DFSTConfig, Population
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.tasks import get_task
from dfst.train import train
from dfst.train.anchors import block_labels, initial_centres
from dfst.train.batches import Sequences
from dfst.train.config import TrainConfig
from dfst.train.restarts import restart_seed
from dfst.train.rundir import DATA_FILE, STATE_FILE
from dfst.train.state import load_train_state

SETTINGS = {"jitter": {"noise": 0.0, "l1": 0.0}, "noise": {"noise": 0.05, "l1": 0.0},
            "noise-l1": {"noise": 0.05, "l1": 1e-5}}


class Pause(Exception):
    """Raised from the progress callback once a checkpoint to measure is on disk."""


def config(setting: str, seed: int, iters: int, every: int) -> TrainConfig:
    return TrainConfig(task="add2", samples=20, max_digits=3, seed=seed, init="jitter", normalize_h=False,
                       forward="loop", engine="fused", restarts=1, extract=False, finetune=False,
                       iters=iters, eval_every=0, checkpoint_every=every, log_every=1000,
                       **SETTINGS[setting])


def weights_at(run: Path, cfg: TrainConfig):
    """The model in run/state.safetensors (the last checkpoint) and its iteration."""
    task = get_task(cfg.task)
    model = Population([INITS[cfg.init](DFSTConfig(len(task.alphabet), task.agent.d, task.name),
                                        restart_seed(cfg.seed, 0))])
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    info = load_train_state(run / STATE_FILE, model, optimizer)
    return model.member(0), info["iteration"], info["loss"]


def residual(model, run: Path, task) -> dict:
    """The largest and mean consistency residual against the centres of the automaton read off (None
    where no conflict-free automaton explains the training PTOs)."""
    data = load_dataset(run / DATA_FILE)
    try:
        blocks = block_labels(model, data, task.agent)
    except DfstError as err:
        return {"residual_max": None, "residual_mean": None, "why": str(err)[:120]}
    centres = initial_centres(model, Sequences.of(data), blocks).double()
    q, x, nxt = blocks.transitions.unbind(-1)
    A = model.A.detach().double()
    moved = torch.einsum("nij,nj->ni", A[x], centres[q])
    errors = (moved - centres[nxt]).norm(dim=-1)
    turned = (moved / moved.norm(dim=-1, keepdim=True) - centres[nxt]).norm(dim=-1)
    return {"residual_max": float(errors.max()), "residual_mean": float(errors.mean()),
            "direction_residual_max": float(turned.max()), "states": blocks.count}


def measure(model, run: Path, task, digits: tuple[int, ...]) -> dict:
    report, _ = run_protocol(task, DfstWeights.of(*model.numpy_weights()),
                             EvalConfig(digits, random=10, rescale=True))
    levels = {lv["digits"]: f"{lv['exact']}/{lv['instances']}" for lv in report["levels"]}
    return {"robust": report["robust_max_digits"], "probabilistic": report["probabilistic_max_digits"],
            "levels": levels, **residual(model, run, task)}


def run_one(out: Path, setting: str, seed: int, args, done: set) -> None:
    cfg = config(setting, seed, args.iters, args.every)
    run = out / "runs" / f"{setting}-s{seed}"
    task = get_task("add2")

    def pause(record: dict) -> None:
        it = record["iteration"]
        if it % args.every == 0 and it < cfg.iters and (setting, seed, it) not in done:
            raise Pause

    while True:
        start = time.process_time()
        with contextlib.suppress(Pause):  # paused at a checkpoint to measure, or finished
            train(cfg, run, resume=True, progress=pause, command="scripts/train_alone.py")
        model, iteration, loss = weights_at(run, cfg)
        if (setting, seed, iteration) not in done:
            point = {"setting": setting, "seed": seed, "iteration": iteration, "loss": loss,
                     "train_cpu_s": round(time.process_time() - start, 1),
                     **measure(model, run, task, args.digits)}
            with open(out / "points.jsonl", "a") as f:
                f.write(json.dumps(point) + "\n")
            done.add((setting, seed, iteration))
            print(json.dumps(point), flush=True)
        if iteration >= cfg.iters:
            return


def seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=seeds, default=seeds("0-4"))
    parser.add_argument("--settings", default="jitter,noise,noise-l1")
    parser.add_argument("--iters", type=int, default=500_000)
    parser.add_argument("--every", type=int, default=25_000)
    parser.add_argument("--digits", type=lambda s: tuple(int(x) for x in s.split(",")),
                        default=(10, 100, 1000, 10000))
    parser.add_argument("--plot", type=Path, help="draw OUT/points.jsonl into this figure and stop")
    args = parser.parse_args()
    if args.plot:
        points = [json.loads(line) for line in (args.out / "points.jsonl").read_text().splitlines()]
        plot(points, args.plot)
        print_table(points)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    points = args.out / "points.jsonl"
    measured = map(json.loads, points.read_text().splitlines()) if points.exists() else []
    done = {(p["setting"], p["seed"], p["iteration"]) for p in measured}
    for seed in args.seeds:
        for setting in args.settings.split(","):
            run_one(args.out, setting, seed, args, done)


COLOURS = {"jitter": "tab:gray", "noise": "tab:blue", "noise-l1": "tab:red"}


def shown(length: int) -> int:
    """Robust length on a log axis: 0 (not even the shortest length) drawn at 1."""
    return max(length, 1)


def plot(points: list[dict], path: Path) -> None:
    from dfst.results.plots import plt, save_figure

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), dpi=110)
    for (setting, seed) in sorted({(p["setting"], p["seed"]) for p in points}):
        run = sorted((p for p in points if (p["setting"], p["seed"]) == (setting, seed)),
                     key=lambda p: p["iteration"])
        left.plot([p["iteration"] for p in run], [shown(p["robust"]) for p in run], color=COLOURS[setting],
                  alpha=0.7, marker=".", label=setting if seed == 0 else None)
        measured = [p for p in run if p.get("direction_residual_max") is not None]
        right.scatter([p["direction_residual_max"] for p in measured], [shown(p["robust"]) for p in measured],
                      color=COLOURS[setting], s=12, alpha=0.7)
    grid = [x / 100 for x in range(5, 300)]
    right.plot(grid, [1 / x for x in grid], "k--", lw=1, label="1 / residual")
    left.set(xlabel="iteration", ylabel="robust length (digits; 0 drawn at 1)", yscale="log",
             title="add2, training's own weights")
    right.set(xlabel="largest direction residual |A[x]c_q/|A[x]c_q| - c_q'|", ylabel="robust length",
              xscale="log", yscale="log", title="robust length against the residual")
    left.legend()
    right.legend()
    fig.tight_layout()
    save_figure(fig, path)


def print_table(points: list[dict]) -> None:
    """Per setting and seed: the best robust length seen, where, and the final point."""
    print("| setting | seed | best robust (iteration) | final robust / probabilistic | final exact at "
          "10 / 100 / 1,000 / 10,000 | final loss | final direction residual |")
    print("|---|---|---|---|---|---|---|")
    for (setting, seed) in sorted({(p["setting"], p["seed"]) for p in points},
                                  key=lambda key: (list(COLOURS).index(key[0]), key[1])):
        run = sorted((p for p in points if (p["setting"], p["seed"]) == (setting, seed)),
                     key=lambda p: p["iteration"])
        best = max(run, key=lambda p: (p["robust"], -p["iteration"]))
        last = run[-1]
        residual = last.get("direction_residual_max")
        where = f" ({best['iteration']:,})" if best["robust"] else ""
        print(f"| {setting} | {seed} | {best['robust']}{where} | {last['robust']} / "
              f"{last['probabilistic']} (at {last['iteration']:,}) | {' / '.join(last['levels'].values())} | "
              f"{last['loss']:.1e} | {'-' if residual is None else f'{residual:.3f}'} |")


if __name__ == "__main__":
    main()
