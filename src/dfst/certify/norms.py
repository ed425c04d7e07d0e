"""Per-node weights of the deviation norm, so that the edge bounds follow the DFST's own dynamics.

In the centres' basis a trained DFST maps a deviation toward state r's centre, seen from node n, onto
one toward r's successor, seen from m, scaled by the ratio of the two edges' gains: one row per
column, a near-permutation. A plain l1 norm takes the largest column of every edge at once, so
along a cycle it multiplies gains that belong to different deviations (5-10 per step on fine-tuned
add2). Weights omega[n, j] with omega_m . |G_e e_j| <= gamma omega_n[j] on every edge (G_e the
edge's deviation map divided by its scale factor) make each edge's operator norm at most gamma, the
smallest factor tried for which such weights exist: longest paths in the graph of (node, coordinate)
pairs with log weights log |G_e[i, j]| - log gamma, which are bounded exactly when no cycle of
deviations grows faster than gamma. The weights only choose the norm: the bounds are computed with
them afterwards and the checker re-verifies those, so a poor choice costs tightness, never soundness.
"""

from __future__ import annotations

import numpy as np

from dfst.certify.frame import Frame

GAMMAS = (1 + 1e-9, 1 + 1e-7, 1 + 1e-5, 1 + 1e-3, 1.01, 1.1, 1.5, 2.0, 4.0)
NEGLIGIBLE = 1e-13  # entries of G below this (relative to 1) do not shape the weights
MAX_SPREAD = 1e12  # weights spread wider than this are not used (the bounds lose precision)
MAX_PAIRS = 4_000_000  # (edge, entry) pairs searched at most; beyond, the plain l1 norm
MAX_COORDINATES = 20_000  # (node, coordinate) pairs at most; beyond, the plain l1 norm


def deviation_maps(frame: Frame, A: np.ndarray, edges: list[tuple[int, int, int]]) -> list[np.ndarray]:
    """|P_m M P_n| / |beta_e| per edge (n, x, m): how a deviation moves, relative to the scale."""
    out = []
    for n, x, m in edges:
        M = frame.Tinv @ A[x].astype(np.float64) @ frame.T
        i = frame.pivot[m]
        beta = (M @ frame.centres[n])[i] / frame.centres[m][i]
        G = np.abs(frame.projector(m) @ M @ frame.projector(n))
        out.append(G / abs(beta) if beta != 0 else np.full_like(G, np.inf))
    return out


def deviation_weights(frame: Frame, A: np.ndarray, edges: list[tuple[int, int, int]]) -> np.ndarray:
    """omega (N, d) >= 1; all ones when no factor in GAMMAS admits weights."""
    nodes, d = frame.centres.shape
    if not edges or nodes * d > MAX_COORDINATES:  # Bellman-Ford rounds grow with the pairs: l1 then
        return np.ones((nodes, d))
    maps = deviation_maps(frame, A, edges)
    if sum(int((G > NEGLIGIBLE).sum()) for G in maps) > MAX_PAIRS:
        return np.ones((nodes, d))
    if not all(np.isfinite(G).all() for G in maps):
        return np.ones((nodes, d))
    src, dst, logs = _pair_graph(edges, maps, d)
    for gamma in GAMMAS:  # omega[src] >= G omega[dst]: longest paths from dst to src
        longest = longest_paths(nodes * d, dst, src, logs - np.log(gamma))
        if longest is not None and longest.max() <= np.log(MAX_SPREAD):
            return np.exp(longest).reshape(nodes, d)
    return np.ones((nodes, d))


def _pair_graph(edges, maps, d: int):
    """Constraints omega[n, j] >= G_e[i, j] omega[m, i]: arrays (from (n, j), to (m, i), log G)."""
    src, dst, logs = [], [], []
    for (n, _, m), G in zip(edges, maps):
        i, j = np.nonzero(G > NEGLIGIBLE)
        src.append(n * d + j)
        dst.append(m * d + i)
        logs.append(np.log(G[i, j]))
    return np.concatenate(src), np.concatenate(dst), np.concatenate(logs)


def longest_paths(count: int, tail: np.ndarray, head: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """L >= 0 with L[head] >= L[tail] + w on every edge (Bellman-Ford from 0 everywhere), or None when
    a cycle has positive weight (no such L)."""
    L = np.zeros(count)
    for _ in range(count + 1):
        new = L.copy()
        np.maximum.at(new, head, L[tail] + w)
        if np.array_equal(new, L):
            return L
        L = new
    return None
