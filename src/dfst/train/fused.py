"""The fused teacher-forced engine: training's objective and its gradient in one compiled pass.

Autograd builds a graph of a dozen small tensor ops per step; at a DFST's sizes (d ≤ 35, k ≤ 11)
their dispatch and bookkeeping, not the arithmetic, were the iteration's time. The kernels
(`dfst.train.fused_kernels`, numba: already dfst's engine for closed-loop runs, so no new dependency)
run each sequence forward and back with its d×d products written out, and `FusedObjective` hands
their gradient to torch, so Adam, the L1 penalty and checkpoints stay as they were.

What it computes is `dfst.train.objectives`' loss plus the vertex penalty, per restart, for the
normalised or plain loop; `tests/test_fused.py` checks value and gradient against autograd's on
random configurations of every task's shapes. `supports(cfg)` says when it applies.
"""

from __future__ import annotations

import os

import numba
import numpy as np
import torch

from dfst.model import Population
from dfst.train.config import TrainConfig
from dfst.train.fused_kernels import CE, MSE, objective_and_gradient
from dfst.train.objectives import active_penalties

LOSS_CODES = {"mse": MSE, "ce": CE}
IN_PASS = ("vertex",)  # the penalties of the registry the kernel computes beside the loss

# numba's OpenMP workers spin between parallel regions: with the kernel called once an iteration they
# tripled a one-thread run's CPU seconds (6.3 against 2.2 for 150 add10 iterations) and took a core
# from other jobs. The workqueue layer's workers sleep. Chosen here unless the user chose one (its
# environment variable); numba fixes the layer at the first parallel call of the process.
if os.environ.get("NUMBA_THREADING_LAYER") is None:
    numba.config.THREADING_LAYER = "workqueue"


def supports(cfg: TrainConfig, device: torch.device) -> bool:
    """The fused engine runs this config: on the CPU, the loop forward (h normalised, or forward
    'loop'), a loss it knows, and no penalty that reads the states but the one its pass computes."""
    loop = cfg.normalize_h or cfg.forward == "loop"
    unknown = [name for name, penalty in active_penalties(cfg).items()
               if penalty.reads_states and name not in IN_PASS]
    return device.type == "cpu" and loop and cfg.loss in LOSS_CODES and not unknown


def weight_penalties(cfg: TrainConfig, model: Population, step: int) -> torch.Tensor | float:
    """The penalties `cfg` turns on that the pass does not compute (they read only the weights)."""
    return sum(penalty.weight(step, cfg) * penalty.value(model, None, None)
               for name, penalty in active_penalties(cfg).items() if name not in IN_PASS)


class FusedObjective(torch.autograd.Function):
    """(A, B, C, h0) -> (every restart's loss + vertex_weight·vertex, (R,); the losses alone, without
    a gradient); the gradient comes from the kernel's pass, scaled by each restart's upstream one."""

    @staticmethod
    def forward(ctx, A, B, C, h0, batch: tuple, options: tuple):
        losses, vertex, *grads = run_kernel(A, B, C, h0, batch, options)
        ctx.save_for_backward(*grads)
        ctx.mark_non_differentiable(losses)
        return losses + options[2] * vertex, losses

    @staticmethod
    def backward(ctx, upstream, _losses):
        scale = upstream.view(-1, *([1] * 3))  # (R, 1, 1, 1): restart r's objective only touches its weights
        gA, gB, gC, gh0 = ctx.saved_tensors
        return gA * scale, gB * scale, gC * scale, gh0 * upstream[:, None], None, None


def run_kernel(A, B, C, h0, batch: tuple, options: tuple) -> tuple[torch.Tensor, ...]:
    """The kernel on torch tensors: (losses, vertex, gA, gB, gC, gh0)."""
    reads, writes, moves, lengths, noise = batch
    normalise, loss, vertex_weight, chunks = options
    arrays = [t.detach().numpy() for t in (A, A.detach().mT.contiguous(), B, C, h0)]
    has_noise = noise is not None
    noise_array = (noise.numpy() if has_noise
                   else np.zeros((1, 1, reads.shape[1], A.shape[-1]), dtype=np.float32))
    out = objective_and_gradient(*arrays, reads.numpy(), writes.numpy(), moves.numpy(), lengths.numpy(),
                                 noise_array, has_noise, normalise, LOSS_CODES[loss],
                                 np.float32(vertex_weight), chunks)
    return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in out)


def fused_objective(model: Population, reads: torch.Tensor, writes: torch.Tensor, moves: torch.Tensor,
                    mask: torch.Tensor, noise: torch.Tensor | None, cfg: TrainConfig,
                    vertex_weight: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(objective per restart, with its gradient; the restarts' losses alone, (R,), without) for the
    batch: what `scores` + `LOSSES[cfg.loss]` + the vertex penalty compute, fused."""
    # the sequences are cut into cfg.threads chunks whatever the machine: the sums, and so the run,
    # depend on that setting alone (bit for bit), the threads only on how many cores there are
    chunks = cfg.threads
    numba.set_num_threads(min(cfg.threads, numba.config.NUMBA_NUM_THREADS))
    lengths = mask.sum(1)
    batch = (reads.contiguous(), writes.contiguous(), moves.contiguous(), lengths,
             None if noise is None else noise.float().contiguous())
    options = (bool(cfg.normalize_h), cfg.loss, float(vertex_weight), chunks)
    return FusedObjective.apply(model.A, model.B, model.C, model.h0, batch, options)
