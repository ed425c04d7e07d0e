"""The coordinates a region proof works in: a basis T built from the lockstep centres.

Each lockstep node n has a centre: the direction of its representative h, in coordinates y = T^-1 h. The
region of n is the cone {lambda (c_n + e) : lambda > 0, w_n . e = 0, ||e||_n <= r_n}, with w_n = e_i /
c_n[i] for the largest coordinate i of c_n, so deviations are measured after dividing out the scale, in
the weighted norm ||e||_n = sum_j omega[n, j] |e_j| (`norms.py` chooses the weights; any positive
weights give a sound proof). T holds up to d linearly independent centres (greedy, largest residual
first, centres before anything else), completed by the space orthogonal to them: for a DFST close to a
one-hot automaton in some basis, this finds that basis, the centres become unit vectors and the maps
T^-1 A[x] T nearly one-hot; the directions no state uses get coordinates of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dfst.grid.rollout import direction

U32 = 2.0 ** -24  # unit roundoff of float32
MAX_CONDITION = 1e8  # beyond this the float64 evaluation of the bounds is not trusted
CENTRE_FIRST = 0.05  # a centre whose relative residual is above this is taken before unit vectors


def gamma(n: int) -> float:
    """Bound on the relative error of an n-term float32 dot product: n u / (1 - n u)."""
    return n * U32 / (1 - n * U32)


def choose_basis(points: np.ndarray) -> np.ndarray:
    """d×d basis: independent columns among `points` (N×d), then the rest of the space orthogonal to
    them; columns max-abs 1."""
    d = points.shape[1]
    candidates = np.concatenate([points, np.eye(d)])  # (K, d)
    norms = np.maximum(np.linalg.norm(candidates, axis=1), 1e-300)
    residual = candidates.copy()
    is_point = np.arange(len(candidates)) < len(points)
    chosen = []
    for _ in range(d):  # Gram-Schmidt with pivoting on the relative residual, centres first
        relative = np.linalg.norm(residual, axis=1) / norms
        # a centre well clear of the span so far beats any unit vector: in the centres' own basis a
        # trained DFST's maps are close to one-hot (a near-permutation per symbol), and the bounds tight
        relative = np.where(is_point & (relative > CENTRE_FIRST), relative + 1, relative)
        best = int(np.argmax(relative))
        q = residual[best] / np.linalg.norm(residual[best])
        # a centre as it is; past the centres, the part of a unit vector outside their span, so the
        # directions no state uses (which training can map to 0) are coordinates of their own
        column = candidates[best] if is_point[best] else q
        chosen.append(column / np.abs(column).max())
        residual -= np.outer(residual @ q, q)
    return np.array(chosen).T


@dataclass(frozen=True)
class Frame:
    T: np.ndarray  # (d, d) basis, columns max-abs 1
    Tinv: np.ndarray  # (d, d)
    centres: np.ndarray  # (N, d) c_n = T^-1 direction(h_n)
    pivot: np.ndarray  # (N,) index i_n of the largest |c_n|: w_n = e_i / c_n[i]
    omega: np.ndarray  # (N, d) > 0: the deviation e at node n is measured as sum_j omega[n, j] |e_j|

    @property
    def condition(self) -> float:
        return float(np.linalg.norm(self.T, 1) * np.linalg.norm(self.Tinv, 1))

    def projector(self, n: int) -> np.ndarray:
        """P_n = I - c_n w_n^T: the part of a vector off the centre's ray; row i_n is exactly 0."""
        c, i = self.centres[n], self.pivot[n]
        P = np.eye(len(c)) - np.outer(c, np.eye(len(c))[i] / c[i])
        P[i] = 0.0
        return P


def make_frame(points: np.ndarray, T: np.ndarray | None = None) -> Frame:
    """The frame for node representatives `points` (N×d float32), with basis T (default: chosen)."""
    dirs = np.array([direction(p) for p in points])
    T = choose_basis(dirs) if T is None else T
    if T.shape != (points.shape[1],) * 2:
        raise ValueError("the centres do not span a basis")
    Tinv = np.linalg.inv(T)
    centres = dirs @ Tinv.T
    return Frame(T, Tinv, centres, np.abs(centres).argmax(axis=1), np.ones_like(centres))
