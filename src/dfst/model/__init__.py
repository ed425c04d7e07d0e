"""The Differentiable Finite-State Transducer: a config dataclass and a module with a pure step.

D = (A, B, C, h0) with h0 ∈ R^d, A ∈ R^{k×d×d}, B ∈ R^{k×k×d}, C ∈ R^{k×5×d}, all float32.
With x_t the index of the symbol under the head, one step is fully linear:

    h_{t+1} = A[x_t] h_t        symbol scores s_t = B[x_t] h_t        move scores m_t = C[x_t] h_t

The written symbol is argmax s_t and the move argmax m_t (moves in the order of
`dfst.automata.MOVES`: U, D, L, R, S). Ties go to the FIRST maximal index, as both `torch.argmax`
and `numpy.argmax` do; an all-zero score vector therefore reads as symbol 0 and move U.

Teacher forcing: fed the symbols the expert read, every hidden state is known in advance, so one
function, `hidden_states`, computes them all (with or without a restart axis, normalisation and
noise) by one of three methods of the same values (`FORWARDS`): a T-step loop over the symbol table,
or a log-depth scan of prefix products (`dfst.model.scan`). `readout` and `teacher_forced` give the scores;
`DFST.unroll`/`forward` and training (`dfst.train`) both call it; `teacher_forced_points` is its
float64 form on PTOs, scaled by exact powers of two, that extraction (`dfst.extract`) clusters.
`Population` holds R restarts with a leading axis on every weight. Closed-loop execution on the
grid (the numba engine, and its one step callable from Python, `engine_step`) lives in
`dfst.grid.rollout`, which takes the weights as numpy arrays (`numpy_weights`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from dfst.automata import (
    MOVES,
    param_count,  # k·d·(k + d + 5) + d, kept torch-free for the CLI
)
from dfst.errors import DfstError
from dfst.model.scan import DEFAULT_SCAN, prefix_products_hillis_steele

N_MOVES = len(MOVES)  # 5: C has one score row per move
__all__ = ["DFST", "FORWARDS", "INITS", "N_MOVES", "DFSTConfig", "Population", "hidden_states", "param_count",
           "readout", "teacher_forced", "teacher_forced_points", "weight_shapes"]


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
        reads = x_seq.reshape(int(np.prod(x_seq.shape[:-1])), x_seq.shape[-1])  # (b, T)
        (b, T), (k, d) = reads.shape, (self.config.k, self.config.d)
        symbols, moves, h = teacher_forced(self, reads)  # h: (b, T, d), h_0 … h_{T-1}
        last = self.step(h[:, -1], reads[:, -1])[0] if T else self.h0.expand(b, d)  # h_T
        h = torch.cat([h, last[:, None]], dim=1)  # (b, T+1, d)
        batch = x_seq.shape[:-1]
        return h.reshape(*batch, T + 1, d), symbols.reshape(*batch, T, k), moves.reshape(*batch, T, N_MOVES)

    def forward(self, x_seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced scores: x_seq (T,) or (batch, T) -> ((…, T, k), (…, T, 5))."""
        _, symbol_scores, move_scores = self.unroll(x_seq)
        return symbol_scores, move_scores

    def numpy_weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Copies of (A, B, C, h0) as float32, C-contiguous numpy arrays, for the numba engine."""
        return tuple(p.detach().cpu().numpy().astype(np.float32, order="C", copy=True)
                     for p in (self.A, self.B, self.C, self.h0))



# ----------------------------------------------------------------------------- initialisations


def random_init(config: DFSTConfig, seed: int) -> DFST:
    """Seeded Gaussian weights: A[j] ~ N(0, 1/d) (spectral radius about 1), B, C ~ N(0, 0.01), h0 = e0."""
    g = torch.Generator().manual_seed(seed)
    k, d = config.k, config.d
    A = torch.randn(k, d, d, generator=g) / d**0.5
    B, C = 0.1 * torch.randn(k, k, d, generator=g), 0.1 * torch.randn(k, len(MOVES), d, generator=g)
    return DFST.from_weights(A, B, C, torch.eye(d)[0], task=config.task)


def jitter_init(config: DFSTConfig, seed: int) -> DFST:
    """The published init plus seeded N(0, 0.01²) on A, B and C: the same start, minus its saddle.

    With exactly A[j] = I, B = C = 0 and h0 = e0, every gradient keeps h = e0 (training stalls unless
    noise on h breaks the symmetry); a tiny perturbation breaks it without noise.
    """
    g = torch.Generator().manual_seed(seed)
    k, d = config.k, config.d
    A = torch.eye(d).expand(k, d, d) + 0.01 * torch.randn(k, d, d, generator=g)
    B, C = 0.01 * torch.randn(k, k, d, generator=g), 0.01 * torch.randn(k, len(MOVES), d, generator=g)
    return DFST.from_weights(A, B, C, torch.eye(d)[0], task=config.task)


INITS: dict[str, Callable[[DFSTConfig, int], DFST]] = {
    "identity": lambda config, seed: DFST.init_identity(config),
    "jitter": jitter_init,
    "random": random_init,
}


# ----------------------------------------------------------------------------- restarts side by side


class Population(nn.Module):
    """R DFSTs of one size trained side by side: every weight carries a leading restart axis,
    A (R, k, d, d), B (R, k, k, d), C (R, k, 5, d), h0 (R, d).

    Restarts are independent runs batched into one tensor program. The objective is the sum of the
    restarts' objectives and Adam is elementwise, so each restart follows the trajectory it would
    follow alone; batching only amortises Python and kernel overhead, which dominates at the DFST's
    tiny sizes. Restart r is `member(r)`; the parameters are named like a DFST's, so training state
    saves alike.
    """

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


# ----------------------------------------------------------------------------- the teacher-forced pass
#
# Fed the reads x_0 … x_{T-1}, the states are h_0 = h0 (+ n_0) and h_{t+1} = A[x_t] h_t (+ n_{t+1}),
# with h divided by its norm before each step's noise when normalising. Padded steps (mask False)
# keep h and add no noise, so they never change a real state and keep padded states finite.


def _loop(A, h0, reads, mask, noise, normalize):
    """T steps, each applying every restart's k matrices and keeping the one read: no per-step
    (b, T, d, d) matrices, the fastest on big batches, and the only method for noise with normalising."""
    R, (b, T), d = A.shape[0], reads.shape, A.shape[-1]
    h, states = h0[:, None, :].expand(R, b, d), []
    for t in range(T):
        if normalize:
            h = _normalized(h)
        if noise is not None:
            h = h + torch.where(mask[None, :, t, None], noise[:, :, t], 0.0)
        states.append(h)
        if t + 1 < T:
            every = torch.einsum("rkij,rbj->rbki", A, h)  # (R, b, k, d)
            h_next = every.gather(2, reads[None, :, t, None, None].expand(R, b, 1, d)).squeeze(2)
            h = torch.where(mask[None, :, t, None], h_next, h)
    if not states:
        return A.new_zeros(R, b, 0, d)
    return torch.stack(states, dim=2)  # (R, b, T, d)


def _scanned(scan: Callable[[torch.Tensor], torch.Tensor]) -> Callable:
    """The states from prefix products P_t = A_t ··· A_0 (`dfst.model.scan`, log depth), restarts folded into
    the batch. Noise keeps the recurrence affine: h -> M h + n is [[M, n], [0, 1]] acting on (h, 1).
    Normalising commutes with a linear recurrence, so it is done once at the end (not with noise)."""
    def states(A, h0, reads, mask, noise, normalize):
        if normalize and noise is not None:
            raise ValueError("noise with normalize is not a linear recurrence; use method 'loop'")
        R, (b, T), d = A.shape[0], reads.shape, A.shape[-1]
        steps = A[:, reads].reshape(R * b, T, d, d)  # (R·b, T, d, d): restart r's matrix per step
        flat_mask = mask.repeat(R, 1)  # (R·b, T)
        steps = torch.where(flat_mask[..., None, None], steps, torch.eye(d, dtype=A.dtype, device=A.device))
        h = h0[:, None, :].expand(R, b, d).reshape(R * b, d)
        if noise is not None:
            noise = torch.where(flat_mask[..., None], noise.reshape(R * b, T, d), 0.0)  # (R·b, T, d)
        if T == 0:
            return A.new_zeros(R, b, 0, d)
        if noise is not None:
            h = h + noise[:, 0]  # (R·b, d)
        if T == 1:
            out = h.unsqueeze(1)
        else:
            out = torch.cat([h.unsqueeze(1), _scanned_later(scan, steps[:, :-1], h, noise)], dim=1)
        return (_normalized(out) if normalize else out).view(R, b, T, d)
    return states


def _scanned_later(scan, steps: torch.Tensor, h: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
    """h_1 … h_{T-1} (batch, T-1, d) from the steps (batch, T-1, d, d) (the last matrix feeds no readout)."""
    d = h.shape[-1]
    if noise is None:
        return (scan(steps) @ h[:, None, :, None]).squeeze(-1)
    affine = F.pad(torch.cat([steps, noise[:, 1:, :, None]], dim=-1), (0, 0, 0, 1))
    affine[..., d, d] = 1.0  # (batch, T-1, d+1, d+1)
    lifted = F.pad(h, (0, 1), value=1.0)  # (batch, d+1)
    return (scan(affine) @ lifted[:, None, :, None]).squeeze(-1)[..., :d]


def _normalized(h: torch.Tensor) -> torch.Tensor:
    """h / |h| along the last axis; an all-zero h stays zero."""
    return h / h.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)


# The same states three ways: log-depth scans (torch's associative_scan, hand-rolled Hillis-Steele;
# d× the arithmetic of the loop, they win on long sequences and small batches) or the loop.
FORWARDS: dict[str, Callable] = {
    "scan": _scanned(DEFAULT_SCAN),  # torch's associative_scan where torch has it
    "hillis": _scanned(prefix_products_hillis_steele),
    "loop": _loop,
}


def hidden_states(A: torch.Tensor, h0: torch.Tensor, reads: torch.Tensor, mask: torch.Tensor | None = None,
                  noise: torch.Tensor | None = None, *, normalize: bool = False,
                  method: str = "loop") -> torch.Tensor:
    """Teacher-forced states h_0 … h_{T-1}, the one computation of them in dfst.

    A (k, d, d) and h0 (d,) of one DFST, or (R, k, d, d) and (R, d) of a Population; reads (b, T);
    mask (b, T) True on real steps (None: all); noise (b, T, d), or (R, b, T, d) with restarts, or None.
    Returns (b, T, d), or (R, b, T, d) with restarts. `method`: a key of FORWARDS.
    """
    single = A.dim() == 3
    if single:
        A, h0, noise = A[None], h0[None], None if noise is None else noise[None]
    if mask is None:
        mask = torch.ones(reads.shape, dtype=torch.bool, device=reads.device)
    h = FORWARDS[method](A, h0, reads, mask, noise, normalize)
    return h[0] if single else h


def readout(W: torch.Tensor, h: torch.Tensor, reads: torch.Tensor) -> torch.Tensor:
    """W[x_t] h_t per restart and step: W (R, k, n, d), h (R, b, T, d), reads (b, T) -> (R, b, T, n)."""
    R, n = W.shape[0], W.shape[2]
    every = torch.einsum("rknd,rbtd->rbtkn", W, h)  # (R, b, T, k, n)
    index = reads[None, :, :, None, None].expand(R, -1, -1, 1, n)
    return every.gather(3, index).squeeze(3)


def teacher_forced(model: DFST | Population, reads: torch.Tensor, mask: torch.Tensor | None = None,
                   noise: torch.Tensor | None = None, *, normalize: bool = False,
                   method: str = "loop") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Symbol and move scores (…, b, T, k), (…, b, T, 5) of every step, fed the reads (b, T), and the
    hidden states h (…, b, T, d) they were read from; … is a Population's restart axis (noise then
    (R, b, T, d)), absent for a DFST (noise (b, T, d))."""
    single = isinstance(model, DFST)
    A, B, C, h0 = (getattr(model, name) for name in ("A", "B", "C", "h0"))
    if single:
        A, B, C, h0 = A[None], B[None], C[None], h0[None]
        noise = None if noise is None else noise[None]
    h = hidden_states(A, h0, reads, mask, noise, normalize=normalize, method=method)  # (R, b, T, d)
    out = readout(B, h, reads), readout(C, h, reads), h
    return tuple(t[0] for t in out) if single else out


# ----------------------------------------------------------------------------- the float64 reference
# Extraction clusters the teacher-forced states by direction, so it reads them in float64 from the
# float32 weights, unnormalised (the recurrence itself, no noise) and brought back by exact powers of
# two: the scaled points are the bits of the plain float64 recurrence while h never overflows on
# long PTOs. `tests/test_model.py` checks them against `hidden_states` in float64.

# One PTO step as extraction sees it: (index of h before, read, write, move, index of h after).
PtoStep = tuple[int, int, int, int, int]


def teacher_forced_points(weights: Sequence[np.ndarray], traces: Sequence[np.ndarray]
                          ) -> tuple[np.ndarray, list[PtoStep]]:
    """Scaled hidden states (n, d) and steps (from, read, write, move, to) over every PTO.

    `weights` is (A, B, C, h0); `traces` holds one (T, 3) array of (read, write, move) per PTO."""
    A, _, _, h0 = (np.asarray(w).astype(np.float64) for w in weights)
    points, steps = [], []
    with np.errstate(over="ignore", invalid="ignore"):  # diverged weights give inf/nan points, said
        _walk(A, h0, traces, points, steps)            # by the caller, not in numpy warnings
    return np.array(points), steps


def _walk(A: np.ndarray, h0: np.ndarray, traces: Sequence[np.ndarray], points: list, steps: list) -> None:
    for trace in traces:
        h = h0
        points.append(_scaled(h))
        for x, w, m in trace:
            h = _power_of_two_scaled(A[x] @ h)
            points.append(_scaled(h))
            steps.append((len(points) - 2, int(x), int(w), int(m), len(points) - 1))


def _power_of_two_scaled(h: np.ndarray) -> np.ndarray:
    """h brought to max-abs in [0.5, 1) by a power of two: exact, so the scaled points are the same
    bits as without it, but h no longer overflows on long PTOs (a trained mult10 model's did, within
    its 522-step PTOs)."""
    _, exponent = np.frexp(np.abs(h).max())
    return np.ldexp(h, -exponent)  # inf or nan: frexp gives exponent 0, h stays as it is


def _scaled(h: np.ndarray) -> np.ndarray:
    top = np.abs(h).max()
    return h / top if top > 0 else h
