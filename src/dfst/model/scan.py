"""Prefix products of matrices by log-depth scans: the scans behind `dfst.model.hidden_states`.

Under teacher forcing the symbols read are known, so every hidden state is a product of known
matrices: with A_t = A[x_t],

    h_0 = h0,    h_t = A_{t-1} ··· A_1 A_0 h0          (later matrices on the LEFT)

The prefixes P_t = A_t ··· A_0 are an associative (parallel prefix) scan under (P, Q) -> Q P, so they
take O(log T) sequential depth instead of T. `dfst.model.hidden_states` computes the teacher-forced
states from these prefixes (method "scan" or
"hillis"), or by a plain loop (method "loop"); noise and normalisation are handled there.

Two scans of the same prefixes:
  - `prefix_products_torch`: `torch._higher_order_ops.associative_scan`, combine_mode="generic"
    (O(T) matrix products, ~2 log2 T rounds); the default.
  - `prefix_products_hillis_steele`: hand-rolled (O(T log T) products in log2 T rounds, fewer kernel
    calls); the fallback if that private torch API goes away.
The scans do d× the arithmetic of a loop (matrix products instead of mat-vecs): they win on long
sequences and small batches, the loop on short sequences and big batches (benchmarks/scan.py).

Shapes: steps (batch, T, n, n) -> prefixes (batch, T, n, n).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

try:
    from torch._higher_order_ops import associative_scan as _associative_scan
except ImportError:  # a private API; the hand-rolled scan below takes over
    _associative_scan = None

Scan = Callable[[torch.Tensor], torch.Tensor]
__all__ = ["DEFAULT_SCAN", "prefix_products_hillis_steele", "prefix_products_torch"]


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
