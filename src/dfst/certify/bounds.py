"""Conservative bounds of the region proof: how a region moves along an edge, and argmax margins.

Edge n --x--> m, h = lambda T (c_n + e) with w_n . e = 0, ||e||_1 <= r. The engine computes
fl(A[x] h) = A[x] h + rho with |rho| <= gamma_{d+1} |A[x]| |h| + eta (float32 rounding of the
dot products and of the rescale division; eta: underflow, assuming max|h| >= 2^-60). In y = T^-1 h:

    y' = lambda (M c_n + M P_n e + T^-1 rho / lambda),   M = T^-1 A[x] T
    e' = P_m y' / (w_m . y')

so ||e'||_1 <= num(r) / den(r) with num = ||P_m M c_n|| + ||P_m M P_n|| r + || |P_m| xi(r) || and
den = w_m . M c_n - ||w_m^T M P_n||_inf r - |w_m| . xi(r), xi(r) = |T^-1| (gamma |A| |T|-bound of
|h| + eta). Both are affine in r; at r = 0 the rounding only touches the support of |A| |T c_n|,
which keeps exactly sparse (one-hot-like) models at radius 0. The float64 evaluation of all this
gets a relative slack (`slack`), grown with the condition number of T.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dfst.certify.frame import Frame, gamma

UNDERFLOW = 2.0 ** -89  # d * 2^-149 absolute error per entry, relative to a scale >= 2^-60


def slack(frame: Frame) -> float:
    return 1e-9 + frame.condition * 1e-15


@dataclass(frozen=True)
class EdgeBounds:
    """Per edge (arrays over edges): num(r) = a0 + a1 r, den(r) = b0 - b1 r; at r = 0: a0z, b0z."""

    src: np.ndarray
    dst: np.ndarray
    symbol: np.ndarray
    a0z: np.ndarray
    b0z: np.ndarray
    a0: np.ndarray
    a1: np.ndarray
    b0: np.ndarray
    b1: np.ndarray
    beta: np.ndarray  # nominal scale factor w_m . M c_n of the edge

    def image_radius(self, r: np.ndarray, s: float) -> np.ndarray:
        """Bound on the successor's deviation for source radii r (inf where den <= 0)."""
        zero = r == 0
        num = np.where(zero, self.a0z, self.a0 + self.a1 * r) * (1 + s)
        den = np.where(zero, self.b0z, self.b0 - self.b1 * r) * (1 - s)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)


def height_bounds(frame: Frame) -> tuple[np.ndarray, np.ndarray]:
    """|h| / lambda <= hbc_n + r tmax componentwise: hbc (N, d) = |T c_n|, tmax (d,) = max_j |T_ij|."""
    return np.abs(frame.centres @ frame.T.T), np.abs(frame.T).max(axis=1)


def edge_bounds(frame: Frame, A: np.ndarray, edges: list[tuple[int, int, int]]) -> EdgeBounds:
    """Coefficients of every (src, symbol, dst) edge; A is the float32 transition tensor."""
    d = A.shape[1]
    g, hbc, tmax = gamma(d + 1), *height_bounds(frame)
    absTinv = np.abs(frame.Tinv)
    M = {x: frame.Tinv @ A[x].astype(np.float64) @ frame.T for x in {e[1] for e in edges}}
    rows = []
    for n, x, m in edges:
        absA = np.abs(A[x].astype(np.float64))
        Pm, Pn, i, cm = frame.projector(m), frame.projector(n), frame.pivot[m], frame.centres[m]
        scale = abs(cm[i])
        v = M[x] @ frame.centres[n]
        MPn = M[x] @ Pn
        e0 = d * UNDERFLOW * hbc[n].max()
        e1 = d * UNDERFLOW * tmax.max()
        xi_z = absTinv @ (g * absA @ hbc[n] + e0 * (absA @ hbc[n] > 0))
        support = absA @ (hbc[n] + tmax) > 0
        xi_0 = absTinv @ (g * absA @ hbc[n] + e0 * support)
        xi_1 = absTinv @ (g * absA @ tmax + e1 * support)
        absPm = np.abs(Pm)
        resid = np.abs(Pm @ v).sum()
        rows.append((n, m, x, resid + (absPm @ xi_z).sum(), v[i] / cm[i] - xi_z[i] / scale,
                     resid + (absPm @ xi_0).sum(), np.abs(Pm @ MPn).sum(axis=0).max() + (absPm @ xi_1).sum(),
                     v[i] / cm[i] - xi_0[i] / scale, np.abs(MPn[i]).max() / scale + xi_1[i] / scale,
                     v[i] / cm[i]))
    cols = list(zip(*rows)) if rows else [()] * 10
    ints = [np.array(c, dtype=np.int64) for c in cols[:3]]
    return EdgeBounds(ints[0], ints[1], ints[2], *(np.array(c, dtype=np.float64) for c in cols[3:]))


def margin_limits(frame: Frame, readouts: list[tuple[int, np.ndarray, int]]) -> np.ndarray:
    """Largest radius each node tolerates: for every (node, score matrix W (rows x d), wanted row),
    every other row's score stays strictly below the wanted one's, rounding included."""
    d = frame.T.shape[0]
    g, hbc, tmax = gamma(d + 1), *height_bounds(frame)
    s = slack(frame)
    limit = np.full(len(frame.centres), np.inf)
    for n, W, want in readouts:
        W64 = W.astype(np.float64)
        G, Pn, absW = W64 @ frame.T, frame.projector(n), np.abs(W64)
        e0, e1 = d * UNDERFLOW * hbc[n].max(), d * UNDERFLOW * tmax.max()
        for j in range(W.shape[0]):
            if j == want:
                continue
            diff = G[want] - G[j]
            pair = absW[want] + absW[j]
            g0 = diff @ frame.centres[n] * (1 - s) - g * pair @ hbc[n] - 2 * e0
            g1 = np.abs(diff @ Pn).max() + g * pair @ tmax + 2 * e1
            limit[n] = min(limit[n], -np.inf if g0 <= 0 else (g0 / g1 if g1 > 0 else np.inf))
    return limit
