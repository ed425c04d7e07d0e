"""Restarts side by side: each one's seed, its noise-free loss, and the choice of the one kept.

The restarts of a run are a `dfst.model.Population`; restart r starts from `restart_seed(seed, r)`.
The one kept is judged on the training PTOs alone (`select_restart`): never on evaluation lengths,
which would make the choice a peek at the test.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from dfst.data import PtoDataset
from dfst.model import Population
from dfst.tasks import Task
from dfst.train.batches import Sequences
from dfst.train.config import TrainConfig
from dfst.train.evaluation import extract_or_none
from dfst.train.objectives import LOSSES, scores


def restart_seed(seed: int, restart: int) -> int:
    """The initialisation seed of a restart; restart 0 uses the run's seed itself."""
    if restart == 0:
        return seed
    return int(np.random.SeedSequence([seed, restart]).generate_state(1, np.uint32)[0])


def clean_losses(model: Population, seqs: Sequences, cfg: TrainConfig, chunk: int = 256) -> torch.Tensor:
    """Each restart's noise-free loss over every training PTO, `chunk` PTOs at a time (10,000 mult10
    PTOs at once would need gigabytes of scores)."""
    total, steps = torch.zeros(model.size, device=model.A.device), 0
    with torch.no_grad():
        for start in range(0, len(seqs), chunk):
            reads, writes, moves, mask = seqs.batch(torch.arange(start, min(start + chunk, len(seqs))))
            symbol_scores, move_scores, _ = scores(model, reads, mask, None, cfg)
            n = int(mask.sum())
            total += LOSSES[cfg.loss](symbol_scores, move_scores, writes, moves, mask) * n
            steps += n
    return total / steps


def lowest_loss_restart(model: Population, seqs: Sequences, cfg: TrainConfig) -> int:
    """The restart with the lowest noise-free loss (a finite one first): what the periodic evaluation
    follows during training. `select_restart` reads an automaton off every restart, and at every
    evaluation that was most of a run's CPU (add10: 9 extractions each time)."""
    losses = clean_losses(model, seqs, cfg).tolist()
    return min(range(len(losses)), key=lambda r: (not math.isfinite(losses[r]), losses[r]))


def select_restart(model: Population, seqs: Sequences, data: PtoDataset, task: Task,
                   cfg: TrainConfig) -> tuple[int, list[dict]]:
    """The restart to keep, judged on the training PTOs only: a finite noise-free loss first; with
    `extract`, then the fewest states of the automaton read off it (Occam: every candidate reproduces
    the PTOs), then the lowest loss. Returns its index and every restart's figures."""
    losses = clean_losses(model, seqs, cfg).tolist()
    table = []
    for r, loss in enumerate(losses):
        row = {"restart": r, "loss": loss if math.isfinite(loss) else None}
        if cfg.extract and model.size > 1 and math.isfinite(loss):
            found = extract_or_none(model.member(r), data, task)
            row |= {"states": found.agent.d, "rules": found.pairs} if found else {"states": None}
        table.append(row)

    def rank(row: dict) -> tuple:
        states = row.get("states")
        return (row["loss"] is None, states is None and "states" in row, states or 0, row["loss"] or 0.0)
    return min(table, key=rank)["restart"], table
