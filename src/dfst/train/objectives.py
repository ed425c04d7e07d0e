"""What training minimises: a loss and penalties, each a small named unit in a registry.

The objective of an iteration is the sum over restarts of the loss (`LOSSES[cfg.loss]`), plus each
penalty of `PENALTIES` whose config field is not zero, times its weight at that iteration. A new
objective plugs in as one more entry (and, for a loss, its name in `config.CHOICES["loss"]`): the
fused engine (`dfst.train.fused`) computes the loss and the vertex penalty in its own pass, adds the
penalties that read only the weights, and declines a config with any other penalty that reads the
states, which then trains by autograd on this module's definition.

The published loss (`mse`): L = 1/(2T) Σ_t (|ŝ_t − onehot(s_t)|² + |m̂_t − onehot(m_t)|²), with T the
number of real (unpadded) steps in the batch, so every step weighs the same. The scores come from
the model's teacher-forced pass (`dfst.model.teacher_forced`) on noisy states (`noise_at`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from dfst.model import DFST, Population, teacher_forced
from dfst.train.config import TrainConfig


def scores(model: DFST | Population, reads: torch.Tensor, mask: torch.Tensor, noise: torch.Tensor | None,
           cfg: TrainConfig) -> tuple[torch.Tensor, ...]:
    """Training's teacher-forced pass: (symbol scores, move scores, h), as `dfst.model.teacher_forced`.
    With h normalised the loop runs whatever `forward` says: normalising between noisy steps is not a
    linear scan, and without noise a product of a few hundred matrices overflows float32 before the
    final normalisation (mult PTOs)."""
    method = "loop" if cfg.normalize_h else cfg.forward
    return teacher_forced(model, reads, mask, noise, normalize=cfg.normalize_h, method=method)


def noise_at(step: int, cfg: TrainConfig) -> float:
    """σ of the noise on h at 0-based iteration `step`: constant, or annealed linearly to noise_final."""
    if cfg.noise_final is None:
        return cfg.noise
    return cfg.noise + (cfg.noise_final - cfg.noise) * step / max(cfg.iters - 1, 1)


# ----------------------------------------------------------------------------- losses: (…,) per restart


def mse_loss(symbol_scores, move_scores, writes, moves, mask) -> torch.Tensor:
    """The published loss: 1/(2T) Σ_t |ŝ_t − onehot(s_t)|² + |m̂_t − onehot(m_t)|² over real steps."""
    err = ((symbol_scores - F.one_hot(writes, symbol_scores.shape[-1])) ** 2).sum(-1) \
        + ((move_scores - F.one_hot(moves, move_scores.shape[-1])) ** 2).sum(-1)  # (b, T)
    return torch.where(mask, err, 0.0).sum((-2, -1)) / (2 * mask.sum())


def ce_loss(symbol_scores, move_scores, writes, moves, mask) -> torch.Tensor:
    """Cross-entropy of the scores as logits, (CE_symbol + CE_move) / 2, averaged over real steps."""
    ce = _cross_entropy(symbol_scores, writes) + _cross_entropy(move_scores, moves)  # (…, b, T)
    return torch.where(mask, ce, 0.0).sum((-2, -1)) / (2 * mask.sum())


def _cross_entropy(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-step cross-entropy of scores (…, b, T, n) against targets (b, T), shaped (…, b, T)."""
    targets = targets.expand(scores.shape[:-1])
    return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), targets.reshape(-1),
                           reduction="none").view(targets.shape)


# (symbol scores, move scores, writes, moves, mask) -> a scalar for one model, (R,) for a population
LOSSES: dict[str, Callable[..., torch.Tensor]] = {"mse": mse_loss, "ce": ce_loss}


# ----------------------------------------------------------------------------- penalties


def vertex_penalty(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean |h_t - onehot(argmax h_t)|² over real steps: pulls hidden states onto the d corners
    e_1..e_d, where a compiled automaton keeps them (pressure toward a finite set of states)."""
    corner = F.one_hot(h.argmax(-1), h.shape[-1]).to(h.dtype)  # (…, b, T, d)
    return torch.where(mask, ((h - corner) ** 2).sum(-1), 0.0).sum((-2, -1)) / mask.sum()


def discrete_at(step: int, cfg: TrainConfig) -> float:
    """The vertex penalty's weight: ramped linearly from 0 to `discrete` over the first half."""
    return cfg.discrete * min(1.0, 2 * step / max(cfg.iters, 1))


@dataclass(frozen=True)
class Penalty:
    """A term added to the loss when the config field `field` is not zero: `weight(step, cfg)` times
    `value(model, h, mask)`, summed over restarts."""

    field: str
    weight: Callable[[int, TrainConfig], float]
    value: Callable[[Population, torch.Tensor, torch.Tensor], torch.Tensor]
    reads_states: bool = True  # value reads h (an engine that computes no h must compute it or decline)


PENALTIES: dict[str, Penalty] = {
    "l1": Penalty("l1", lambda step, cfg: cfg.l1, lambda model, h, mask: model.A.abs().sum(),
                  reads_states=False),
    "vertex": Penalty("discrete", discrete_at, lambda model, h, mask: vertex_penalty(h, mask).sum()),
}


# ----------------------------------------------------------------------------- fine-tuning penalties
# Used by `dfst.train.finetune`, not by `objective`: they read the centres c_q of the automaton's
# blocks (learned alongside the weights) and the block of every step, which no TrainConfig field holds.


def consistency_penalty(A: torch.Tensor, centres: torch.Tensor, transitions: torch.Tensor) -> torch.Tensor:
    """Mean over the observed transitions (q, x, q') of |A[x] c_q - c_q'|²: A maps each state's centre
    onto its successor's, gain included (the centres are unit vectors). Closed loop nothing damps a
    deviation from the centres, so this residual is what accumulates per step (docs/research/finetune.md)."""
    q, x, nxt = transitions.unbind(-1)
    image = torch.einsum("nij,nj->ni", A[x], centres[q])
    return ((image - centres[nxt]) ** 2).sum(-1).mean()


def centre_pull(h: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor,
                centres: torch.Tensor) -> torch.Tensor:
    """Mean over real steps of |h_t/|h_t| - c_(q_t)|²: each state's direction pulled onto its block's
    centre. h (b, T, d), labels (b, T) with any value in padding, mask (b, T), centres (n, d)."""
    direction = h / h.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)
    err = ((direction - centres[labels.clamp_min(0)]) ** 2).sum(-1)
    return torch.where(mask, err, 0.0).sum() / mask.sum()


def objective(losses: torch.Tensor, model: Population, h: torch.Tensor, mask: torch.Tensor, step: int,
              cfg: TrainConfig) -> torch.Tensor:
    """The scalar to minimise at 0-based iteration `step`: the restarts' losses (R,) and the penalties."""
    total = losses.sum()
    for penalty in active_penalties(cfg).values():
        total = total + penalty.weight(step, cfg) * penalty.value(model, h, mask)
    return total


def active_penalties(cfg: TrainConfig) -> dict[str, Penalty]:
    """The penalties of `PENALTIES` that `cfg` turns on (their field not zero)."""
    return {name: penalty for name, penalty in PENALTIES.items() if getattr(cfg, penalty.field)}


def unused_directions(A: torch.Tensor, centres: torch.Tensor, transitions: torch.Tensor) -> torch.Tensor:
    """What A[x] does where the automaton never goes, driven to 0 so that a deviation there dies:
    mean over symbols x of Σ_r |A[x] c_r|² over the blocks r that never read x (a deviation toward
    c_r is carried along forever by consistency alone), plus |A[x] P|_F², P the projector onto the
    directions outside the centres' span. A (k, d, d), centres (n, d), transitions (m, 3)."""
    k, n = A.shape[0], centres.shape[0]
    reads = torch.zeros(n, k, dtype=torch.bool)
    reads[transitions[:, 0], transitions[:, 1]] = True
    images = torch.einsum("xij,rj->xri", A, centres)  # (k, n, d): A[x] c_r
    unused = torch.where(~reads.T[..., None], images**2, 0.0).sum((-2, -1))
    outside = torch.eye(A.shape[-1], dtype=A.dtype) - torch.linalg.pinv(centres) @ centres
    return (unused + ((A @ outside) ** 2).sum((-2, -1))).mean()


def margin_hinge(scores: torch.Tensor, targets: torch.Tensor, margin: float) -> torch.Tensor:
    """Mean over rows of Σ_j relu(margin - (s_target - s_j))² over the wrong classes j: zero once every
    right score leads every wrong one by `margin`, so it asks nothing more of a readout that is right
    (unlike mse, whose optimum competes with the consistency penalty). scores (n, c), targets (n,)."""
    lead = scores.gather(1, targets[:, None]) - scores
    short = torch.relu(margin - lead).scatter(1, targets[:, None], 0.0)
    return (short**2).sum(-1).mean()
