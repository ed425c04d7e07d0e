"""Teacher-forced training of a sequence-model policy on the DFST's own PTOs.

The data are the DFST's own (`dfst.baselines.policy` passes `training_data(recipe(task, seed))`:
same sampler, samples and max_digits). Given the reads x_1..x_t of a PTO the model predicts the
write w_t and the move m_t; the loss is the sum of the two cross-entropies, averaged over real
(unpadded) steps. PTOs are padded on the right, so padding only ever follows the steps it could
disturb. Adam with gradient clipping; each step's minibatch is a function of (seed, step)
(`dfst.train.batches.batch_rows`) and the initial weights come from torch's generator seeded with
the seed, so one seed on the CPU gives the same weights bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from dfst.automata import param_count
from dfst.baselines.common import clipped_step
from dfst.baselines.policy_models import PolicyConfig, build_policy, policy_config
from dfst.data import PtoDataset
from dfst.tasks.base import Task


def model_for(kind: str, task: Task, size: str) -> PolicyConfig:
    """The policy of `size` for `task` (small: about the DFST's parameters for the task's expert)."""
    return policy_config(kind, len(task.alphabet), size, param_count(task.agent.k, task.agent.d))


def step_loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of the writes plus that of the moves over the real steps, and how many of those
    steps had both predicted right (a 0-d tensor)."""
    reads, writes, moves, mask = batch
    write_scores, move_scores = model(reads)  # (B, T, k), (B, T, 5)
    loss = F.cross_entropy(write_scores[mask], writes[mask]) + F.cross_entropy(move_scores[mask], moves[mask])
    right = (write_scores[mask].argmax(-1) == writes[mask]) & (move_scores[mask].argmax(-1) == moves[mask])
    return loss, right.sum()


def train_policy(kind: str, task: Task, data: PtoDataset, config: dict, seed: int,
                 advance: Callable[[float], None] = lambda loss: None) -> tuple[nn.Module, dict]:
    """Build the policy (torch seeded with `seed`) and train it for config["steps"] Adam steps;
    returns the model (eval mode) and {"final_loss", "train_step_accuracy", "train_seconds"}."""
    from dfst.train.batches import Sequences, batch_rows

    torch.manual_seed(seed)
    model = build_policy(model_for(kind, task, config["size"]))
    sequences = Sequences.of(data)
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    start, losses = time.process_time(), []
    for step in range(config["steps"]):
        loss, _ = step_loss(model, sequences.batch(batch_rows(seed, step, config["batch"], len(sequences))))
        losses.append(clipped_step(opt, model, loss, config["clip"]))
        advance(losses[-1])
    seconds = time.process_time() - start
    model.eval()
    with torch.no_grad():
        _, right = step_loss(model, sequences.batch(None))
    tail = losses[-20:]
    return model, {"final_loss": sum(tail) / len(tail), "train_step_accuracy": int(right) / data.steps,
                   "train_seconds": round(seconds, 3)}
