"""The checker's side of region and bounded certificates: every inequality re-evaluated from the
weights and the certificate's numbers, with code of its own (not `bounds.py`'s or `bounded.py`'s).

Regions (all lengths, rescaled mode): at the saved radii, every readout keeps its margin and every edge
maps its source's region into its target's. Bounded (K steps): at the saved radius caps R_n the margins
hold; each edge's image radius, over [0, R_n], is at most the chord of its convex numerator over the
chord of its concave denominator, column by column; with rho = max_n r[n] / p_n that gives one
increasing convex map F, whose orbit from 0 provably stays below top = R_n / p_n for K steps. In plain
mode the scale factors' bounds and potentials keep max|h| in [2^-60, 2^100 / max ||W||] for K steps.
Finally the task's step bound at max_digits is at most K.
"""

from __future__ import annotations

import math

import numpy as np

MIN_LOG, MAX_LOG = math.log(2.0 ** -60), math.log(2.0 ** 100)
# The checker's own constants, never the certificate's: float32's unit roundoff, the absolute error
# of an underflowing product relative to a scale >= 2^-60, the slack of the float64 evaluation of
# the bounds for a basis of condition c, and the largest condition for which it is trusted.
UNIT_ROUNDOFF, UNDERFLOW, MAX_CONDITION = 2.0 ** -24, 2.0 ** -89, 1e8


def own_slack(condition: float) -> float:
    return 1e-9 + condition * 1e-15


def stated_constants_problem(cert: dict, nodes) -> str | None:
    """Why the certificate's frame or stated constants are not the checker's own (None: they are).
    A certificate that understates the rounding would prove more than the arithmetic gives."""
    if cert.get("version") != 2:
        return (f"a version {cert.get('version')} {cert['kind']} certificate (from before the checker "
                "computed its own constants); run dfst certify again")
    T = np.array(cert["T"], dtype=np.float64)
    if T.shape != (len(nodes[0][1]),) * 2 or not np.isfinite(T).all():
        return "the frame T is not a finite d x d matrix"
    condition = float(np.linalg.cond(T, 1))
    if not condition <= MAX_CONDITION:
        return f"the frame's condition {condition:.3g} is beyond {MAX_CONDITION:.0g}"
    own = {"unit_roundoff": UNIT_ROUNDOFF, "underflow": UNDERFLOW, "slack": own_slack(condition),
           "condition": condition}
    for key, value in own.items():
        stated = cert.get(key)
        if not isinstance(stated, (int, float)) or not math.isclose(stated, value, rel_tol=1e-6):
            return f"it states {key} {stated!r}; the checker's own is {value:.6g}"
    if "limits" in cert or (cert["kind"] == "bounded" and "radii" in cert):
        return ("it states radii or limits that its proof does not use (a certificate states only what "
                "is checked)")
    return None


def radii_problem(radii: object, nodes) -> str | None:
    """Radii are one finite non-negative number per node: a negative or NaN radius would make a
    margin look wider than it is at a node no edge enters (node 0)."""
    r = np.array(radii, dtype=np.float64) if isinstance(radii, list) else None
    if r is None or r.shape != (len(nodes),) or not np.isfinite(r).all() or (r < 0).any():
        return "the radii are not one finite non-negative number per node"
    return None


class Regions:
    """The frame of a certificate and the bounds at a given radius, node by node."""

    def __init__(self, cert: dict, nodes, A, B, C, agent):
        self.T = np.array(cert["T"], dtype=np.float64)
        self.Ti, self.d = np.linalg.inv(self.T), self.T.shape[0]
        self.s, u = own_slack(float(np.linalg.cond(self.T, 1))), UNIT_ROUNDOFF
        self.g, self.underflow = (self.d + 1) * u / (1 - (self.d + 1) * u), UNDERFLOW
        # the centres in float64, as the prover takes them (h / max|h| rounded to float32 would move
        # them by ~1e-8, which the residual of a trained model's edge is sensitive to)
        self.c = np.array([h.astype(np.float64) / np.abs(h).max() for _, h in nodes]) @ self.Ti.T
        self.piv = np.abs(self.c).argmax(axis=1)
        self.om = np.array(cert.get("omega", np.ones_like(self.c)), dtype=np.float64)  # version 1: l1
        self.tmax = (np.abs(self.T)[None] / np.where(self.om > 0, self.om, 1)[:, None, :]).max(axis=2)
        self.nodes, self.A, self.B, self.C, self.agent = nodes, A, B, C, agent

    def weights_ok(self) -> bool:
        return self.om.shape == self.c.shape and bool((self.om > 0).all())

    def P(self, n: int) -> np.ndarray:
        M = np.eye(self.d) - np.outer(self.c[n], np.eye(self.d)[self.piv[n]] / self.c[n][self.piv[n]])
        M[self.piv[n]] = 0
        return M

    def _height(self, n: int, r: float) -> tuple[np.ndarray, float]:
        hb = np.abs(self.T @ self.c[n]) + r * self.tmax[n]
        return hb, self.d * self.underflow * hb.max()

    def margin(self, n: int, x: int, r: float) -> float:
        """The smallest score gap the region of radius r at node n keeps reading x (> 0: argmax safe)."""
        q = self.nodes[n][0]
        _, wrt, mov = self.agent.tables()
        hb, eta = self._height(n, r)
        worst = math.inf
        for W, want in ((self.B[x], wrt[q, x]), (self.C[x], mov[q, x])):
            W = W.astype(np.float64)
            for j in range(W.shape[0]):
                if j == want:
                    continue
                diff = (W[want] - W[j]) @ self.T
                gap = diff @ self.c[n] * (1 - self.s) - (np.abs(diff @ self.P(n)) / self.om[n]).max() * r \
                    - self.g * (np.abs(W[want]) + np.abs(W[j])) @ hb - 2 * eta
                worst = min(worst, gap)
        return worst

    def edge(self, n: int, x: int, m: int, r: float) -> tuple[np.ndarray, np.ndarray, float]:
        """(num, den, up) at source radius r, per deviation column j (all of r on column j, the
        worst case of a linear-fractional bound): image radius <= max_j num_j (1+s) / (den_j (1-s));
        the scale factor lies in [min_j den_j (1-s), up (1+s)]."""
        hb, eta = self._height(n, r)
        M = self.Ti @ self.A[x].astype(np.float64) @ self.T
        absA = np.abs(self.A[x].astype(np.float64))
        xi = np.abs(self.Ti) @ (self.g * absA @ hb + eta * (absA @ hb > 0))
        i, v, om = self.piv[m], M @ self.c[n], self.om
        pivot = abs(self.c[m][i])
        grow = om[m] @ np.abs(self.P(m) @ M @ self.P(n)) / om[n]
        shrink = np.abs((M @ self.P(n))[i]) / om[n] / pivot
        num = om[m] @ np.abs(self.P(m) @ v) + om[m] @ (np.abs(self.P(m)) @ xi) + grow * r
        centre, rounding = v[i] / self.c[m][i], xi[i] / pivot
        return num, centre - rounding - shrink * r, centre + rounding + shrink.max() * r


def _label(regions: Regions, n: int, x: int, m: int | None = None) -> str:
    name = regions.agent.alphabet[x]
    return f"node {n} reading {name}" if m is None else f"edge {n} -{name}-> {m}"


def check_regions(cert: dict, nodes, edges, A, B, C, agent) -> tuple[bool, str]:
    if cert["mode"] != "rescaled":
        return False, "a region certificate covers the rescaled mode only"
    if problem := stated_constants_problem(cert, nodes) or radii_problem(cert.get("radii"), nodes):
        return False, problem
    regions = Regions(cert, nodes, A, B, C, agent)
    if not regions.weights_ok():
        return False, "the norm weights are not positive, one per node and coordinate"
    r, s = np.array(cert["radii"], dtype=np.float64), regions.s
    for (n, x), m in edges.items():
        if (gap := regions.margin(n, x, r[n])) <= 0:
            return False, f"{_label(regions, n, x)}: margin {gap:.3g}"
        if m < 0:
            continue
        num, den, _ = regions.edge(n, x, m, r[n])
        if not _maps_into(num, den, r[m], s):
            return False, f"{_label(regions, n, x, m)}: image radius exceeds {r[m]:.3g}"
    return True, "ok"


def _maps_into(num: np.ndarray, den: np.ndarray, radius: float, s: float) -> bool:
    return bool((den > 0).all() and (num * (1 + s) <= radius * den * (1 - s)).all())


def check_bounded(cert: dict, nodes, edges, A, B, C, agent, step_bound) -> tuple[bool, str]:
    """A bounded certificate; `step_bound(N)` is the task's expert step bound on N-digit operands."""
    if problem := stated_constants_problem(cert, nodes):
        return False, problem
    regions = Regions(cert, nodes, A, B, C, agent)
    if not regions.weights_ok():
        return False, "the norm weights are not positive, one per node and coordinate"
    b = cert["bounded"]
    R, K = np.array(b["caps"], dtype=np.float64), int(b["steps"])
    if R.shape != (len(nodes),) or not (R >= 0).all() or K < 1:
        return False, "the radius caps or the step count are malformed"
    if step_bound(int(cert["max_digits"])) > K:
        return False, f"{cert['max_digits']} digits can take more than {K} steps"
    scales = {}
    for (n, x), m in edges.items():
        if (gap := regions.margin(n, x, R[n])) <= 0:
            return False, f"{_label(regions, n, x)}: margin {gap:.3g} at the cap"
        if m >= 0:
            scales[(n, x, m)] = regions.edge(n, x, m, R[n])
    ok, why = (_check_fixed(regions, scales, R) if b["region_steps"] is None
               else _check_growth(regions, scales, b, R, K))
    if ok and cert["mode"] == "plain":
        ok, why = _check_scale(regions, scales, b, R, K, cert)
    return ok, why


def _check_fixed(regions: Regions, scales: dict, R: np.ndarray) -> tuple[bool, str]:
    """The caps are radii of an all-lengths region proof: each edge maps them into themselves."""
    for (n, x, m), (num, den, _) in scales.items():
        if not _maps_into(num, den, R[m], regions.s):
            return False, f"{_label(regions, n, x, m)}: image radius exceeds {R[m]:.3g}"
    return True, "ok"


def _check_growth(regions: Regions, scales: dict, b: dict, R: np.ndarray, K: int) -> tuple[bool, str]:
    """rho = max_n r[n] / p_n: with each edge's bounds as chords over [0, R_n] (a convex numerator
    below its chord, a concave denominator above), the next rho is at most F(rho), F a max of
    increasing convex linear-fractional pieces; the orbit of F from 0 takes at least K steps to pass
    top (counted interval by interval: on [lo, hi] a step adds at most max(g(lo), g(hi)), g = F - id
    convex), and R_n = p_n top."""
    p, top, s = np.array(b["p"], dtype=np.float64), float(b["top"]), regions.s
    if p.shape != R.shape or not (p > 0).all() or not top > 0 or not np.allclose(R, p * top, rtol=1e-12):
        return False, "the growth constants are malformed"
    pieces = []
    for (n, x, m), (num_cap, den_cap, _) in scales.items():
        num0, den0, _ = regions.edge(n, x, m, 0.0)
        if not (den0 > 0).all():
            return False, f"{_label(regions, n, x, m)}: the scale factor may reach 0"
        slope_num, slope_den = (num_cap - num0) / R[n], (den0 - den_cap) / R[n]
        pieces.append((num0 * (1 + s) / p[m], slope_num * (1 + s) * p[n] / p[m],
                       den0 * (1 - s), slope_den * (1 - s) * p[n]))
    A, G, B, Kd = (np.concatenate([piece[k] for piece in pieces]) for k in range(4))

    def F(rho: float) -> float:
        den = B - Kd * rho
        return math.inf if (den <= 0).any() else float(((A + G * rho) / den).max())

    if _orbit_lower_bound(F, top, K) < K:
        return False, f"the radius bound may pass the caps within {K} steps"
    return True, "ok"


def _orbit_lower_bound(F, top: float, want: int) -> int:
    """Steps the orbit of F from 0 provably spends below top (stops counting at `want`)."""
    lo, steps = 0.0, 0
    while lo < top and steps < want:
        g_lo = F(lo) - lo
        if g_lo <= 0:  # F(lo) <= lo: the orbit never passes lo
            return want
        width = max(64 * g_lo, lo / 4)  # the prover's partition rule, so that the counts agree
        while True:  # an interval across which g grows by at most a quarter, at least g_lo wide
            hi = min(lo + width, top)
            g_hi = F(hi) - hi
            if g_hi <= 1.25 * g_lo or width <= g_lo:
                break
            width /= 2
        steps += max(0, math.floor((hi - lo) / max(g_lo, g_hi)) - 1)
        lo = hi
    return steps


def _check_scale(regions: Regions, scales: dict, b: dict, R: np.ndarray, K: int, cert) -> tuple[bool, str]:
    """Plain mode: lambda's factor per edge within [den, up]; potentials bound every path's product."""
    norm = b.get("norm") or {}
    try:
        grow, shrink = float(norm["grow"]), float(norm["shrink"])
        pi_hi, pi_lo = np.array(norm["pi_hi"], dtype=np.float64), np.array(norm["pi_lo"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        return False, "plain mode: the scale bounds are missing"
    s = regions.s
    for (n, x, m), (_, dens, up) in scales.items():
        den = float(dens.min())
        if den * (1 - s) <= 0:
            return False, f"{_label(regions, n, x, m)}: the scale factor may reach 0"
        if math.log(up * (1 + s)) + pi_hi[n] > grow + pi_hi[m] or \
                -math.log(den * (1 - s)) + pi_lo[n] > shrink + pi_lo[m]:
            return False, f"{_label(regions, n, x, m)}: the scale factor leaves the certificate's bound"
    hbc = np.abs(regions.c @ regions.T.T).max(axis=1)
    top, floor = hbc + R * regions.tmax.max(axis=1), hbc - R * regions.tmax.max(axis=1)
    if (floor <= 0).any():
        return False, "plain mode: a region reaches h = 0"
    start = math.log(float(np.abs(regions.nodes[0][1]).max()))
    wide = max(float(np.abs(W.astype(np.float64)).sum(axis=-1).max())
               for W in (regions.A, regions.B, regions.C))
    high = start + K * max(grow, 0.0) + float((pi_hi - pi_hi[0] + np.log(top)).max())
    low = start - K * max(shrink, 0.0) - float((pi_lo - pi_lo[0] - np.log(floor)).max())
    if high > MAX_LOG - math.log(max(wide, 1.0)) or low < MIN_LOG:
        return False, f"plain mode: max|h| may leave float32's safe range within {K} steps"
    return True, "ok"
