"""The Differentiable Finite-State Transducer: a config dataclass and a module with a pure step.

D = (A, B, C, h0) with h0 ∈ R^d, A ∈ R^{k×d×d}, B ∈ R^{k×k×d}, C ∈ R^{k×5×d}, all float32.
With x_t the index of the symbol under the head, one step is fully linear:

    h_{t+1} = A[x_t] h_t        symbol scores s_t = B[x_t] h_t        move scores m_t = C[x_t] h_t

The written symbol is argmax s_t and the move argmax m_t (moves in the order of
`dfst.automata.MOVES`: U, D, L, R, S). Ties go to the FIRST maximal index, as both `torch.argmax`
and `numpy.argmax` do; an all-zero score vector therefore reads as symbol 0 and move U.

`forward` is teacher-forced: it is fed the symbols the expert read and returns the scores at every
step, from which the loss is computed. Closed-loop execution on the grid lives in `dfst.rollout`,
which takes the weights as numpy arrays (`numpy_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from dfst.automata import MOVES
from dfst.errors import DfstError
from dfst.model_size import param_count  # k·d·(k + d + 5) + d, kept torch-free for the CLI

N_MOVES = len(MOVES)  # 5: C has one score row per move
__all__ = ["DFST", "N_MOVES", "DFSTConfig", "param_count", "weight_shapes"]


def weight_shapes(k: int, d: int) -> dict[str, tuple[int, ...]]:
    """The shape of each weight tensor, by name, in checkpoint order."""
    return {"A": (k, d, d), "B": (k, k, d), "C": (k, N_MOVES, d), "h0": (d,)}


@dataclass(frozen=True)
class DFSTConfig:
    """Sizes of a DFST: k symbols (input and output alphabet), d hidden dimensions, and its task."""

    k: int
    d: int
    task: str | None = None

    def __post_init__(self) -> None:
        for name in ("k", "d"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DfstError(f"DFST size {name} must be a positive integer, got {value!r}")

    @property
    def params(self) -> int:
        return param_count(self.k, self.d)


class DFST(nn.Module):
    """A DFST. `DFST(config)` has all-zero weights; use `init_identity` or `from_weights`."""

    def __init__(self, config: DFSTConfig):
        super().__init__()
        self.config = config
        shapes = weight_shapes(config.k, config.d)
        self.A = nn.Parameter(torch.zeros(shapes["A"]))    # (k, d, d) transition per read symbol
        self.B = nn.Parameter(torch.zeros(shapes["B"]))    # (k, k, d) written-symbol readout
        self.C = nn.Parameter(torch.zeros(shapes["C"]))    # (k, 5, d) move readout
        self.h0 = nn.Parameter(torch.zeros(shapes["h0"]))  # (d,) initial hidden state

    @classmethod
    def init_identity(cls, config: DFSTConfig) -> DFST:
        """The published initialisation: every A[j] = I, B = C = 0, h0 = e_0."""
        model = cls(config)
        with torch.no_grad():
            model.A.copy_(torch.eye(config.d).expand(config.k, -1, -1))
            model.h0[0] = 1.0
        return model

    @classmethod
    def from_weights(cls, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, h0: torch.Tensor,
                     task: str | None = None) -> DFST:
        """A model holding copies of the given weights; sizes are read from A's shape (k, d, d)."""
        k, d = A.shape[0], A.shape[-1]
        model = cls(DFSTConfig(k, d, task))
        with torch.no_grad():
            for name, value in (("A", A), ("B", B), ("C", C), ("h0", h0)):
                target = getattr(model, name)
                if tuple(value.shape) != tuple(target.shape):
                    raise DfstError(f"DFST weight {name} has shape {tuple(value.shape)}, "
                                    f"expected {tuple(target.shape)} for k={k}, d={d}")
                target.copy_(value)
        return model

    def step(self, h: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One pure step. h: (d,) or (batch, d); x: () or (batch,) symbol indices.

        Returns (h_next, symbol_scores, move_scores), shaped (…, d), (…, k), (…, 5).
        """
        x = x.long()  # a uint8 index would be read as a boolean mask
        h_next = torch.einsum("...ij,...j->...i", self.A[x], h)  # (…, d)
        symbol_scores = torch.einsum("...ij,...j->...i", self.B[x], h)  # (…, k)
        move_scores = torch.einsum("...ij,...j->...i", self.C[x], h)  # (…, 5)
        return h_next, symbol_scores, move_scores

    def unroll(self, x_seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Teacher-forced run over read symbols x_seq: (T,) or (batch, T).

        Returns (hidden, symbol_scores, move_scores): hidden (…, T+1, d) holds h_0 … h_T, and the
        scores (…, T, k) and (…, T, 5) are those of step t, computed from h_t.
        """
        x_seq = torch.as_tensor(x_seq).long()
        h = self.h0.expand(*x_seq.shape[:-1], self.config.d)  # (…, d)
        hidden, symbols, moves = [h], [], []
        for t in range(x_seq.shape[-1]):
            h, s, m = self.step(h, x_seq[..., t])
            hidden.append(h)
            symbols.append(s)
            moves.append(m)
        batch = tuple(x_seq.shape[:-1])
        return (torch.stack(hidden, dim=-2), _stack(symbols, (*batch, 0, self.config.k), h),
                _stack(moves, (*batch, 0, N_MOVES), h))

    def forward(self, x_seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced scores: x_seq (T,) or (batch, T) -> ((…, T, k), (…, T, 5))."""
        _, symbol_scores, move_scores = self.unroll(x_seq)
        return symbol_scores, move_scores

    def numpy_weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Copies of (A, B, C, h0) as float32, C-contiguous numpy arrays, for the numba engine."""
        return tuple(p.detach().cpu().numpy().astype(np.float32, order="C", copy=True)
                     for p in (self.A, self.B, self.C, self.h0))


def _stack(items: list[torch.Tensor], empty_shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """Stack per-step outputs along the time axis; an empty sequence gives an empty (…, 0, n) tensor."""
    return torch.stack(items, dim=-2) if items else like.new_zeros(empty_shape)
