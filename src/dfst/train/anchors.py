"""The optimisation side of fine-tuning (`dfst.train.finetune`): the blocks, their centres, two phases.

A trained DFST tracks the expert's states only roughly: its hidden states cluster around a few
directions, and the readout is right on every training step, but A maps one cluster onto the next
only approximately. Closed loop, nothing damps the error (a deviation toward another state's centre
is carried along by a linear map), so a residual r per step accumulates, and N digits (~2.5N steps)
need r well below 1/(2.5N). Fine-tuning makes r small on purpose:

  blocks     every teacher-forced step labelled by the state of the automaton read off the model
             (`dfst.extract`, merge): the automaton is run along each PTO, its state at step t is the
             block of h_t. Only labels are taken from it, never a weight.
  centres    one learnable unit vector c_q per block, started at the mean direction of its states.
  objective  the training loss (mse, h normalised, noise on the direction), plus `weight` times the
             consistency penalty |A[x] c_q - c_q'|² over observed transitions, the pull of every
             normalised h_t toward c_(q_t), and the pull of h0 onto the initial centre
             (`dfst.train.objectives`); and `damping` times the weight of A on the directions the
             automaton never uses (centres of blocks that never read x, and outside the centres'
             span), so that a deviation there dies instead of being carried along.
  phases     (optional, off by default) Adam (cosine lr) with the noise annealed to 0, then Adam
             without noise, then L-BFGS in float64 on that noise-free objective; then the centres
             phase (first, optionally, with the centres frozen orthonormal: `frozen_phase`):
             L-BFGS in float64 on the objective at the centres alone (`Anchored.at_centres`:
             consistency, h0's pull, damping, orthonormal centres and a margin hinge on the
             readouts at each centre), which needs no teacher-forced pass and whose optimum is 0,
             so the residual goes to float32's floor in seconds (docs/research/finetune.md). With more
             blocks than dimensions the model is first `grown` to one dimension per block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from dfst.automata import STOP
from dfst.data import PtoDataset
from dfst.errors import DfstError
from dfst.model import DFST, hidden_states, teacher_forced
from dfst.train.batches import Sequences, step_noise
from dfst.train.objectives import (
    centre_pull,
    consistency_penalty,
    margin_hinge,
    mse_loss,
    unused_directions,
)


@dataclass(frozen=True)
class Blocks:
    """The block of every teacher-forced step and the observed transitions between blocks.

    labels (N, T) int64, -1 in padding; transitions (n, 3) distinct (block, read, next block) of the
    non-halting steps; readouts (r, 4) distinct (block, read, written, move) of every step, halts
    included (the PTOs' own actions); `initial` the block of h_0; `count` blocks (the automaton's final
    state, entered only by halting, has no centre: no state after a halt is ever read)."""

    labels: torch.Tensor
    transitions: torch.Tensor
    readouts: torch.Tensor
    initial: int
    count: int


def block_labels(model: DFST, data: PtoDataset, agent) -> Blocks:
    """Run the automaton that `dfst.extract` (merge) reads off `model` along each PTO of `data`."""
    from dfst.extract import extract

    found = extract(model, data, agent=agent).agent
    nxt, wrt, mov = found.tables()
    initial, final = found.states.index(found.initial), found.states.index(found.final)
    if initial == final:
        raise DfstError("the automaton read off the model halts in its initial state")
    seqs = Sequences.of(data)
    labels = torch.full(seqs.reads.shape, -1, dtype=torch.int64)
    seen: set[tuple[int, int, int]] = set()
    actions: set[tuple[int, int, int, int]] = set()
    for i in range(data.samples):
        q = initial
        for t, (x, w, m) in enumerate(data.trace(i)):
            labels[i, t] = q
            if nxt[q, x] < 0 or wrt[q, x] != w or mov[q, x] != m:
                raise DfstError(f"the automaton read off the model departs from training PTO {i} at step {t}")
            actions.add((q, int(x), int(w), int(m)))
            if m == STOP:
                break
            seen.add((q, int(x), int(nxt[q, x])))
            q = int(nxt[q, x])
    # states are numbered initial first and final last (dfst.extract.cluster.transducer_from_rules)
    count = found.d - 1 if final == found.d - 1 else found.d
    transitions = torch.tensor(sorted(seen), dtype=torch.int64).reshape(-1, 3)
    if transitions.numel() and int(transitions[:, [0, 2]].max()) >= count:
        raise DfstError("the automaton read off the model steps into its final state without halting")
    readouts = torch.tensor(sorted(actions), dtype=torch.int64).reshape(-1, 4)
    return Blocks(labels, transitions, readouts, initial, count)


def grown(model: DFST, d: int) -> DFST:
    """`model` with d hidden dimensions (>= its own): A, B, C and h0 padded with zeros, so the grown
    model computes exactly what `model` does. Used when the automaton read off has more blocks than
    the model has dimensions: their centres cannot all be independent, and the consistency cannot
    reach 0. The new dimensions start at 0; `spread` gives the centres a seeded nudge into them."""
    pad = (0, d - model.config.d)
    A = torch.nn.functional.pad(model.A.detach(), pad + pad)
    B, C, h0 = (torch.nn.functional.pad(w.detach(), pad) for w in (model.B, model.C, model.h0))
    return DFST.from_weights(A, B, C, h0, model.config.task)


def spread(centres: torch.Tensor, old: int, seed: int, scale: float = 1e-2) -> torch.Tensor:
    """Centres with seeded noise of `scale` in the dimensions past `old` (the gradient of every term
    in a dimension where all centres and weights are 0 is 0: without a nudge nothing moves there)."""
    if centres.shape[1] == old:
        return centres
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(centres.shape[0], centres.shape[1] - old, generator=generator)
    return torch.cat([centres[:, :old], scale * noise.to(centres.dtype)], dim=1)


def initial_centres(model: DFST, seqs: Sequences, blocks: Blocks) -> torch.Tensor:
    """The mean direction of each block's noise-free teacher-forced states, as unit vectors (n, d)."""
    reads, _, _, mask = seqs.batch(None)
    with torch.no_grad():
        h = hidden_states(model.A, model.h0, reads, mask, normalize=True)
        labels = blocks.labels[:, :reads.shape[1]]
        sums = torch.zeros(blocks.count, h.shape[-1], dtype=h.dtype).index_add_(0, labels[mask], h[mask])
    sums[blocks.initial] += model.h0.detach() / model.h0.detach().norm()
    return sums / sums.norm(dim=-1, keepdim=True).clamp_min(1e-12)


class Anchored(torch.nn.Module):
    """The model and its learnable centres (c = u/|u|), with the fine-tuning objective."""

    def __init__(self, model: DFST, centres: torch.Tensor, seqs: Sequences, blocks: Blocks, weight: float,
                 damping: float = 0.0, margin: float = 0.5):
        super().__init__()
        self.model, self.u = model, torch.nn.Parameter(centres.clone())
        self.batch, self.blocks, self.weight, self.damping = seqs.batch(None), blocks, weight, damping
        self.margin = margin
        self.labels = blocks.labels[:, :self.batch[0].shape[1]]

    def centres(self) -> torch.Tensor:
        return self.u / self.u.norm(dim=-1, keepdim=True)

    def objective(self, noise: torch.Tensor | None) -> tuple[torch.Tensor, dict]:
        """Loss + weight·(consistency + pull of h + pull of h0) + damping·unused, each part as a float."""
        reads, writes, moves, mask = self.batch
        symbols, move_scores, h = teacher_forced(self.model, reads, mask, noise, normalize=True)
        c = self.centres()
        parts = {"loss": mse_loss(symbols, move_scores, writes, moves, mask),
                 "consistency": consistency_penalty(self.model.A, c, self.blocks.transitions),
                 "pull": centre_pull(h, self.labels, mask, c),
                 "pull_h0": ((self.model.h0 - c[self.blocks.initial]) ** 2).sum()}
        total = parts["loss"] + self.weight * (parts["consistency"] + parts["pull"] + parts["pull_h0"])
        return self._damped(total, parts, c)

    def at_centres(self) -> tuple[torch.Tensor, dict]:
        """The objective on the centres alone, no teacher-forced pass: consistency + pull of h0 +
        damping·unused + the margin hinge of the readouts at each (block, read) the PTOs show (the
        PTO's written symbol and move lead every other score by `margin`). Its optimum is 0: the
        consistency and the readouts are met exactly, with nothing (like mse) pulling against them."""
        model, c = self.model, self.centres()
        q, x, write, move = self.blocks.readouts.unbind(-1)
        state = c[q]
        parts = {"consistency": consistency_penalty(model.A, c, self.blocks.transitions),
                 "pull_h0": ((model.h0 - c[self.blocks.initial]) ** 2).sum(),
                 "margin": margin_hinge(torch.einsum("nij,nj->ni", model.B[x], state), write, self.margin)
                 + margin_hinge(torch.einsum("nij,nj->ni", model.C[x], state), move, self.margin)}
        if len(c) <= c.shape[1]:  # room for orthonormal centres: A's norm and float32 rounding stay small
            parts["orthogonality"] = ((c @ c.T - torch.eye(len(c), dtype=c.dtype)) ** 2).sum() / len(c)
        return self._damped(sum(parts.values()), parts, c)

    def _damped(self, total: torch.Tensor, parts: dict, c: torch.Tensor) -> tuple[torch.Tensor, dict]:
        """`total` + damping·unused (the part recorded when damping is on), and the parts as floats."""
        if self.damping:
            parts["unused"] = unused_directions(self.model.A, c, self.blocks.transitions)
            total = total + self.damping * parts["unused"]
        return total, {name: value.item() for name, value in parts.items()}


Progress = Callable[[dict], None] | None


def adam_phase(anchored: Anchored, *, noisy: int, plain: int, lr: float, noise: float, seed: int,
               progress: Progress = None) -> dict:
    """`noisy` Adam iterations with σ annealed linearly from `noise` to 0, then `plain` without noise;
    the lr follows one cosine over both. Noise per iteration from (seed, iteration), as training's."""
    optimizer = torch.optim.Adam(anchored.parameters(), lr=lr, foreach=False)
    total, parts = noisy + plain, {}
    shape = (*anchored.batch[0].shape, anchored.model.config.d)
    for it in range(total):
        sigma = noise * (1 - it / noisy) if it < noisy else 0.0
        for group in optimizer.param_groups:
            group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * it / total))
        value, parts = anchored.objective(step_noise(seed, it + 1, sigma, shape))
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()
        if progress is not None:
            progress({"phase": "adam", "iteration": it + 1, "iters": total, "objective": value.item()})
    return {"iterations": total, **parts}


def lbfgs_phase(anchored: Anchored, iters: int, progress: Progress = None, chunk: int = 100, *,
                at_centres: bool = False, name: str | None = None) -> dict:
    """L-BFGS (strong Wolfe) in float64 on the noise-free objective (`at_centres`: on
    `Anchored.at_centres`); the weights return to float32 (a cast, nothing else). Stops early once a
    step changes nothing representable."""
    if iters == 0:
        return {"iterations": 0}
    phase = name or ("centres" if at_centres else "lbfgs")
    objective = anchored.at_centres if at_centres else lambda: anchored.objective(None)
    anchored.double()
    optimizer = torch.optim.LBFGS(anchored.parameters(), lr=1, max_iter=chunk, history_size=100,
                                  tolerance_grad=1e-15, tolerance_change=1e-20,
                                  line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad(set_to_none=True)
        value, _ = objective()
        value.backward()
        return value

    done = 0
    while done < iters:
        for group in optimizer.param_groups:
            group["max_iter"] = min(chunk, iters - done)
            group["max_eval"] = group["max_iter"] * 5 // 4
        optimizer.step(closure)
        reached = optimizer.state_dict()["state"][0]["n_iter"]
        stalled, done = reached == done, reached
        if progress is not None:  # the objective where the chunk ended (L-BFGS returns where it began)
            with torch.no_grad():
                value = objective()[0].item()
            progress({"phase": phase, "iteration": min(done, iters), "iters": iters, "objective": value})
        if stalled:
            break
    with torch.no_grad():
        _, parts = objective()
    anchored.float()
    return {"iterations": done, **parts}


def frozen_phase(anchored: Anchored, iters: int, progress: Progress = None) -> dict:
    """`iters` L-BFGS iterations on the objective at the centres with the centres frozen at the
    orthonormal set closest to them (Löwdin: U Vᵀ of their SVD): A, B, C and h0 alone move, and
    for fixed centres the objective is least squares plus a hinge, whose optimum 0 L-BFGS reaches.
    With the centres free from the start, mult10's 34 blocks in d = 35 stalled at a consistency of
    0.03 (docs/research/finetune.md). Skipped (iterations 0) when there are more blocks than dimensions."""
    count, d = anchored.u.shape
    if iters == 0 or count > d:
        return {"iterations": 0}
    with torch.no_grad():
        U, _, Vh = torch.linalg.svd(anchored.u.double(), full_matrices=False)
        anchored.u.copy_((U @ Vh).to(anchored.u.dtype))
    anchored.u.requires_grad_(False)  # L-BFGS sees a zero gradient for it: it stays put
    try:
        return lbfgs_phase(anchored, iters, progress, at_centres=True, name="frozen")
    finally:
        anchored.u.requires_grad_(True)


def measures(model: DFST, anchored: Anchored) -> dict:
    """The float32 weights judged in float64: the consistency residual (mean of |A[x]c_q - c_q'|², and
    the largest |A[x]c_q - c_q'|), and whether the noise-free teacher-forced argmax reproduces every
    training step (write and move)."""
    reads, writes, moves, mask = anchored.batch
    with torch.no_grad():
        A = model.A.detach().double()
        c = anchored.centres().detach().double()
        q, x, nxt = anchored.blocks.transitions.unbind(-1)
        errors = (torch.einsum("nij,nj->ni", A[x], c[q]) - c[nxt]).norm(dim=-1)
        symbols, move_scores, _ = teacher_forced(model, reads, mask, normalize=True)
        right = (symbols.argmax(-1) == writes) & (move_scores.argmax(-1) == moves)
    return {"residual": float((errors**2).mean()), "residual_max": float(errors.max()),
            "train_exact": bool(right[mask].all()), "wrong_steps": int((~right & mask).sum())}
