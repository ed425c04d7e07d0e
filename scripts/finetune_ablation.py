"""Ablation of the centres phase: what does it owe to the trained weights, beyond the block labels?

    python scripts/finetune_ablation.py RUN OUT [--seed S]

Reads the blocks off RUN's trained model exactly as `dfst finetune` does, then runs the centres phase
(the defaults: 3,000 L-BFGS iterations, damping 1, margin 0.5) from a *random* model (dfst's random
init, seed S) and random unit centres instead of the trained weights and their states' directions.
Writes the result to OUT (a checkpoint; evaluate it with dfst eval OUT). docs/research/finetune.md reports it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from dfst.model import DFSTConfig, random_init
from dfst.model.checkpoint import save_checkpoint
from dfst.tasks import get_task
from dfst.train import anchors
from dfst.train.batches import Sequences
from dfst.train.finetune import FinetuneConfig, read_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.out.exists() or args.out.is_symlink():  # before the work; nothing there is ever replaced
        parser.error(f"{args.out} exists: choose a new path")
    torch.set_num_threads(1)
    cfg = FinetuneConfig()
    name, trained, data = read_run(args.run)
    blocks = anchors.block_labels(trained, data, get_task(name).agent)  # the only thing kept
    model = random_init(DFSTConfig(trained.config.k, max(trained.config.d, blocks.count), name), args.seed)
    centres = torch.randn(blocks.count, model.config.d, generator=torch.Generator().manual_seed(args.seed))
    anchored = anchors.Anchored(model, centres / centres.norm(dim=-1, keepdim=True), Sequences.of(data),
                                blocks, cfg.weight, cfg.damping, cfg.margin)
    before = anchors.measures(model, anchored)
    phase = anchors.lbfgs_phase(anchored, cfg.centre_iters, at_centres=True)
    after = anchors.measures(model, anchored)
    save_checkpoint(model, args.out, {"source": "finetune_ablation", "run": str(args.run), "seed": args.seed})
    print(json.dumps({"before": before, "phase": phase, "after": after}, indent=1))


if __name__ == "__main__":
    main()
