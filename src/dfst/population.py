"""R DFSTs of one size trained side by side: every weight carries a leading restart axis.

Restarts are independent runs batched into one tensor program. The objective is the sum of the
restarts' objectives, and Adam is elementwise, so each restart follows the trajectory it would follow
alone; batching only amortises Python and kernel overhead, which dominates at the DFST's tiny sizes
(16 restarts of add2 cost about what 2 cost one at a time).

Shapes: A (R, k, d, d), B (R, k, k, d), C (R, k, 5, d), h0 (R, d); reads (b, T) are shared by the
restarts; states come back as (R, b, T, d) and scores as (R, b, T, n).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from dfst.model import DFST
from dfst.scan import prefix_states


class Population(nn.Module):
    """Restart r is `member(r)`; the parameters are named like a DFST's, so training state saves alike."""

    def __init__(self, members: list[DFST]):
        super().__init__()
        self.config = members[0].config
        for name in ("A", "B", "C", "h0"):
            setattr(self, name, nn.Parameter(torch.stack([getattr(m, name).detach() for m in members])))

    @property
    def size(self) -> int:
        return self.A.shape[0]

    def member(self, r: int) -> DFST:
        """A detached copy of restart r as a plain DFST."""
        return DFST.from_weights(self.A[r].detach(), self.B[r].detach(), self.C[r].detach(),
                                 self.h0[r].detach(), task=self.config.task)


def scanned_states(scan: Callable) -> Callable:
    """Population states by a log-depth scan: the restarts are folded into the batch axis."""
    def states(A, h0, reads, mask, noise, *, normalize):
        R, (b, T), d = A.shape[0], reads.shape, A.shape[-1]
        steps = A[:, reads].reshape(R * b, T, d, d)  # (R·b, T, d, d): restart r's matrix per step
        h = h0[:, None, :].expand(R, b, d).reshape(R * b, d)
        flat_noise = None if noise is None else noise.reshape(R * b, T, d)
        out = prefix_states(steps, h, mask.repeat(R, 1), flat_noise, normalize=normalize, scan=scan)
        return out.view(R, b, T, d)
    return states


def looped_states(A: torch.Tensor, h0: torch.Tensor, reads: torch.Tensor, mask: torch.Tensor,
                  noise: torch.Tensor | None, *, normalize: bool) -> torch.Tensor:
    """The same states by a T-step loop that applies every restart's k matrices and keeps the one read
    (`scan.prefix_states_by_symbol` with a restart axis). Normalises, then adds the step's noise."""
    R, (b, T), d = A.shape[0], reads.shape, A.shape[-1]
    h, states = h0[:, None, :].expand(R, b, d), []
    for t in range(T):
        if normalize:
            h = h / h.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)
        if noise is not None:
            h = h + torch.where(mask[None, :, t, None], noise[:, :, t], 0.0)
        states.append(h)
        if t + 1 < T:
            every = torch.einsum("rkij,rbj->rbki", A, h)  # (R, b, k, d)
            h_next = every.gather(2, reads[None, :, t, None, None].expand(R, b, 1, d)).squeeze(2)
            h = torch.where(mask[None, :, t, None], h_next, h)
    if not states:
        return A.new_zeros(R, b, 0, d)
    return torch.stack(states, dim=2)


def population_readout(W: torch.Tensor, h: torch.Tensor, reads: torch.Tensor) -> torch.Tensor:
    """W[x_t] h_t per restart and step: W (R, k, n, d), h (R, b, T, d), reads (b, T) -> (R, b, T, n)."""
    R, n = W.shape[0], W.shape[2]
    every = torch.einsum("rknd,rbtd->rbtkn", W, h)  # (R, b, T, k, n)
    index = reads[None, :, :, None, None].expand(R, -1, -1, 1, n)
    return every.gather(3, index).squeeze(3)
