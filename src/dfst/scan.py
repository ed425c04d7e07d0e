"""Teacher-forced hidden states of a DFST from a log-depth scan of prefix products.

Under teacher forcing the symbols read are known, so every hidden state is a product of known
matrices: with A_t = A[x_t],

    h_0 = h0,    h_t = A_{t-1} ··· A_1 A_0 h0          (later matrices on the LEFT)

The prefixes P_t = A_t ··· A_0 are an associative (parallel prefix) scan under (P, Q) -> Q P, so they
take O(log T) sequential depth instead of T. Noise added to h at every step keeps the recurrence
affine, h_{t+1} = A_t h_t + n_{t+1}; an affine map h -> M h + v is the matrix [[M, v], [0, 1]] acting
on (h, 1), so the same scan covers it. Normalising h at every step commutes with a linear
recurrence (normalising after each step equals normalising at the end); only noise together with
normalisation needs a sequential loop.

Four ways to the same states:
  - `prefix_states` with `prefix_products_torch`: `torch._higher_order_ops.associative_scan`,
    combine_mode="generic" (O(T) matrix products, ~2 log2 T rounds); the default.
  - `prefix_states` with `prefix_products_hillis_steele`: hand-rolled (O(T log T) products in
    log2 T rounds, fewer kernel calls); the fallback if that private torch API goes away.
  - `prefix_states_sequential`: the plain loop, one mat-vec per step; the reference.
  - `prefix_states_by_symbol`: the loop fed the symbol table and the reads, never building the
    (batch, T, d, d) per-step matrices; the fastest on big batches.
The scans do d× the arithmetic of the loop (matrix products instead of mat-vecs): they win on long
sequences and small batches, the loops on short sequences and big batches (benchmarks/scan.py).

Shapes: A_steps (batch, T, d, d); h0 (d,) or (batch, d); mask (batch, T) bool, True on real steps;
noise (batch, T, d) or None. Returns the states h_0 … h_{T-1} (batch, T, d) read out at each step.
Steps where mask is False (padding after a sequence's end) use the identity and no noise, so they
never change a real state and keep padded states finite.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

try:
    from torch._higher_order_ops import associative_scan as _associative_scan
except ImportError:  # a private API; the hand-rolled scan below takes over
    _associative_scan = None

Scan = Callable[[torch.Tensor], torch.Tensor]
__all__ = ["prefix_products_hillis_steele", "prefix_products_torch", "prefix_states",
           "prefix_states_by_symbol", "prefix_states_sequential"]


def _after(earlier: torch.Tensor, later: torch.Tensor) -> torch.Tensor:
    """The combine of the scan: apply `earlier`, then `later`."""
    return later @ earlier


def prefix_products_torch(steps: torch.Tensor) -> torch.Tensor:
    """P_t = M_t ··· M_0 along dim 1 of (batch, T, n, n), by torch's associative_scan (generic mode)."""
    return _associative_scan(_after, steps, dim=1, combine_mode="generic")


def prefix_products_hillis_steele(steps: torch.Tensor) -> torch.Tensor:
    """The same prefixes by Hillis-Steele: log2(T) rounds, each combining position i-s into i."""
    prefix, shift = steps, 1
    while shift < steps.shape[1]:
        prefix = torch.cat([prefix[:, :shift], _after(prefix[:, :-shift], prefix[:, shift:])], dim=1)
        shift *= 2
    return prefix


DEFAULT_SCAN: Scan = prefix_products_torch if _associative_scan is not None else prefix_products_hillis_steele


def _prepare(A_steps: torch.Tensor, h0: torch.Tensor, mask: torch.Tensor | None,
             noise: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Identity and zero noise on padded steps; h0 broadcast to (batch, d)."""
    batch, _, d, _ = A_steps.shape
    if mask is not None:
        eye = torch.eye(d, dtype=A_steps.dtype, device=A_steps.device)
        A_steps = torch.where(mask[..., None, None], A_steps, eye)  # (batch, T, d, d)
        if noise is not None:
            noise = torch.where(mask[..., None], noise, 0.0)  # (batch, T, d)
    return A_steps, h0.expand(batch, d), noise


def _normalized(h: torch.Tensor) -> torch.Tensor:
    """h / |h| along the last axis; an all-zero h stays zero."""
    return h / h.norm(dim=-1, keepdim=True).clamp_min(torch.finfo(h.dtype).tiny)


def prefix_states(A_steps: torch.Tensor, h0: torch.Tensor, mask: torch.Tensor | None = None,
                  noise: torch.Tensor | None = None, *, normalize: bool = False,
                  scan: Scan = DEFAULT_SCAN) -> torch.Tensor:
    """h_0 … h_{T-1} (batch, T, d) by a log-depth scan; see the module docstring for the recurrence.

    With `noise`, h_t is the noisy state: h_0 = h0 + n_0, h_{t+1} = A_t h_t + n_{t+1}. With
    `normalize`, every state is divided by its Euclidean norm (not combinable with noise: use
    `prefix_states_sequential`).
    """
    if normalize and noise is not None:
        raise ValueError("noise with normalize is not a linear recurrence; use prefix_states_sequential")
    A_steps, h, noise = _prepare(A_steps, h0, mask, noise)
    batch, T, d, _ = A_steps.shape
    if T == 0:
        return A_steps.new_zeros(batch, 0, d)
    if noise is not None:
        h = h + noise[:, 0]  # (batch, d)
    if T == 1:
        states = h.unsqueeze(1)  # (batch, 1, d)
        return _normalized(states) if normalize else states
    steps = A_steps[:, :-1]  # (batch, T-1, d, d): the last matrix feeds no readout
    if noise is None:
        later = (scan(steps) @ h[:, None, :, None]).squeeze(-1)  # (batch, T-1, d): h_1 … h_{T-1}
    else:  # h -> A h + n is the matrix [[A, n], [0, 1]] acting on (h, 1)
        affine = F.pad(torch.cat([steps, noise[:, 1:, :, None]], dim=-1), (0, 0, 0, 1))
        affine[..., d, d] = 1.0  # (batch, T-1, d+1, d+1)
        lifted = F.pad(h, (0, 1), value=1.0)  # (batch, d+1)
        later = (scan(affine) @ lifted[:, None, :, None]).squeeze(-1)[..., :d]
    states = torch.cat([h.unsqueeze(1), later], dim=1)  # (batch, T, d)
    return _normalized(states) if normalize else states


def prefix_states_sequential(A_steps: torch.Tensor, h0: torch.Tensor, mask: torch.Tensor | None = None,
                             noise: torch.Tensor | None = None, *, normalize: bool = False) -> torch.Tensor:
    """The reference: the same states by a plain loop, one mat-vec per step.

    With `normalize`, h is divided by its norm after every product, before the step's noise is added.
    """
    A_steps, h, noise = _prepare(A_steps, h0, mask, noise)
    T = A_steps.shape[1]
    states = []
    for t, A_t in enumerate(A_steps.unbind(1)):  # unbind: a cheap backward, unlike indexing per step
        if normalize:
            h = _normalized(h)
        if noise is not None:
            h = h + noise[:, t]
        states.append(h)
        if t + 1 < T:
            h = (A_t @ h.unsqueeze(-1)).squeeze(-1)  # (batch, d)
    if not states:
        return A_steps.new_zeros(A_steps.shape[0], 0, A_steps.shape[-1])
    return torch.stack(states, dim=1)


def prefix_states_by_symbol(A: torch.Tensor, h0: torch.Tensor, reads: torch.Tensor,
                            mask: torch.Tensor | None = None, noise: torch.Tensor | None = None, *,
                            normalize: bool = False) -> torch.Tensor:
    """The states of `prefix_states_sequential(A[reads], …)` from the symbol table A (k, d, d) and the
    reads (batch, T), without building the (batch, T, d, d) per-step matrices: each step applies all
    k matrices (k mat-vecs per sample) and keeps the one read. Far less memory traffic on big batches.
    """
    batch, T = reads.shape
    h, rows = h0.expand(batch, A.shape[-1]), torch.arange(batch)
    states = []
    for t in range(T):
        if normalize:
            h = _normalized(h)
        if noise is not None:
            h = h + (noise[:, t] if mask is None else torch.where(mask[:, t, None], noise[:, t], 0.0))
        states.append(h)
        if t + 1 < T:
            h_next = torch.einsum("kij,bj->bki", A, h)[rows, reads[:, t]]  # (batch, d)
            h = h_next if mask is None else torch.where(mask[:, t, None], h_next, h)
    if not states:
        return A.new_zeros(batch, 0, A.shape[-1])
    return torch.stack(states, dim=1)
