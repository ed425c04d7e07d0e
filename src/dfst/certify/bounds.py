"""Conservative bounds of the region proof: how a region moves along an edge, and argmax margins.

Edge n --x--> m, h = lambda T (c_n + e) with w_n . e = 0, ||e||_n <= r. The engine computes
fl(A[x] h) = A[x] h + rho with |rho| <= gamma_{d+1} |A[x]| |h| + eta (float32 rounding of the
dot products and of the rescale division; eta: underflow, assuming max|h| >= 2^-60). In y = T^-1 h:

    y' = lambda (M c_n + M P_n e + T^-1 rho / lambda),   M = T^-1 A[x] T
    e' = P_m y' / (w_m . y')

so ||e'||_m <= num / den with num = ||P_m M c_n||_m + sum_j G_j t_j + || |P_m| xi(r) ||_m and
den = w_m . M c_n - sum_j K_j t_j - |w_m| . xi(r), where t_j = omega_n[j] |e_j| (sum_j t_j <= r),
G_j = (omega_m . |P_m M P_n e_j|) / omega_n[j], K_j = |(M P_n)[i, j]| / (omega_n[j] |c_m[i]|) and
xi(r) = |T^-1| (gamma |A| |T|-bound of |h| + eta); ||.||_m is node m's weighted l1 norm. The ratio is
linear-fractional in t, so its largest value on the simplex is at a vertex: all of r on one column j,
num_j(r) = a0 + (G_j + x1) r over den_j(r) = b0 - (K_j + y1) r. A deviation that the edge merges
into the successor's own ray (a large K_j) leaves nothing behind (G_j ~ 0), so the two never add up.
At r = 0 the rounding only touches the support of |A| |T c_n|, which keeps exactly sparse
(one-hot-like) models at radius 0. The float64 evaluation of all this
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
    """Per edge (arrays over edges) and deviation column j: num_j(r) = a0 + (G_j + x1) r and
    den_j(r) = b0 - (K_j + y1) r; at r = 0: a0z, b0z. a1 = max_j G_j + x1, b1 = max_j K_j + y1 bound
    every column at once (the diagnosis's cycle matrices use them)."""

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
    G: np.ndarray  # (E, d) growth of the numerator per column
    K: np.ndarray  # (E, d) shrink of the denominator per column
    x1: np.ndarray  # (E,) rounding's growth of the numerator with r
    y1: np.ndarray  # (E,) rounding's shrink of the denominator with r

    def image_radius(self, r: np.ndarray, s: float) -> np.ndarray:
        """Bound on the successor's deviation for source radii r (inf where a denominator is <= 0)."""
        r = np.asarray(r, dtype=np.float64)
        num = (self.a0[:, None] + (self.G + self.x1[:, None]) * r[:, None]) * (1 + s)
        den = (self.b0[:, None] - (self.K + self.y1[:, None]) * r[:, None]) * (1 - s)
        with np.errstate(divide="ignore", invalid="ignore"):
            worst = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf).max(axis=1)
        zero = (self.a0z * (1 + s)) / np.where(self.b0z > 0, self.b0z * (1 - s), np.nan)
        return np.where(r == 0, np.where(self.b0z > 0, zero, np.inf), worst)


def height_bounds(frame: Frame) -> tuple[np.ndarray, np.ndarray]:
    """|h| / lambda <= hbc_n + r tmax_n componentwise: hbc (N, d) = |T c_n|, tmax (N, d) with
    tmax[n, i] = max_j |T_ij| / omega[n, j] (|T e| <= tmax_n ||e||_n)."""
    return np.abs(frame.centres @ frame.T.T), (np.abs(frame.T)[None] / frame.omega[:, None, :]).max(axis=2)


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
        om_n, om_m = frame.omega[n], frame.omega[m]
        e0 = d * UNDERFLOW * hbc[n].max()
        e1 = d * UNDERFLOW * tmax[n].max()
        xi_z = absTinv @ (g * absA @ hbc[n] + e0 * (absA @ hbc[n] > 0))
        support = absA @ (hbc[n] + tmax[n]) > 0
        xi_0 = absTinv @ (g * absA @ hbc[n] + e0 * support)
        xi_1 = absTinv @ (g * absA @ tmax[n] + e1 * support)
        absPm = np.abs(Pm)
        resid = om_m @ np.abs(Pm @ v)
        G, K = om_m @ np.abs(Pm @ MPn) / om_n, np.abs(MPn[i]) / om_n / scale
        x1, y1 = om_m @ (absPm @ xi_1), xi_1[i] / scale
        rows.append((n, m, x, resid + om_m @ (absPm @ xi_z), v[i] / cm[i] - xi_z[i] / scale,
                     resid + om_m @ (absPm @ xi_0), G.max() + x1, v[i] / cm[i] - xi_0[i] / scale,
                     K.max() + y1, v[i] / cm[i], G, K, x1, y1))
    if not rows:
        empty = np.zeros(0)
        return EdgeBounds(*(empty.astype(np.int64),) * 3, *(empty,) * 7, np.zeros((0, d)), np.zeros((0, d)),
                          empty, empty)
    cols = list(zip(*rows))
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
        e0, e1 = d * UNDERFLOW * hbc[n].max(), d * UNDERFLOW * tmax[n].max()
        for j in range(W.shape[0]):
            if j == want:
                continue
            diff = G[want] - G[j]
            pair = absW[want] + absW[j]
            g0 = diff @ frame.centres[n] * (1 - s) - g * pair @ hbc[n] - 2 * e0
            g1 = (np.abs(diff @ Pn) / frame.omega[n]).max() + g * pair @ tmax[n] + 2 * e1
            limit[n] = min(limit[n], -np.inf if g0 <= 0 else (g0 / g1 if g1 > 0 else np.inf))
    return limit
