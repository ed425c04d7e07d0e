"""A bounded region proof: the DFST equals the expert on every run of at most K steps.

When no radii close under the edge bounds (a trained DFST carries deviations along with gain about 1,
so the float32 rounding and the weights' residual injected each step add up), the same bounds still
say how long the regions stay inside the margins. Every edge e: n -> m bounds the next radius by
(a0 + a1 r) / (b0 - b1 r) (`bounds.py`). With weights p_n > 0 from the largest cycle mean of the gains
a1 / b0 (longest paths), rho_t = max_n r_t[n] / p_n obeys one scalar map for all edges at once,
rho -> (a + gamma rho) / (1 - kappa rho), whose t-fold composition is a power of a 2x2 matrix; K is
the last t before rho_t passes the margin limits (capped where the denominator would halve).

In plain mode the scale lambda of h (h = lambda T (c_n + e)) is multiplied on each edge by a factor
within [lo_e, hi_e]; the same cycle-mean bound keeps max|h| inside [2^-60, 2^100 / max ||W||] for
a number of steps, and K is the smaller of the two. `max_digits` is the largest N whose expert step
bound on N-digit operands is at most K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dfst.certify.bounds import EdgeBounds, height_bounds
from dfst.certify.frame import Frame
from dfst.certify.norms import longest_paths

MAX_STEPS = 10**18  # "no bound in sight": reported as this many steps at most
MIN_LOG, MAX_LOG = math.log(2.0 ** -60), math.log(2.0 ** 100)  # the range max|h| must stay in (plain)
CYCLE_SLACK = 1e-9  # relative widening of the cycle factors, so that the potentials exist in float64
CLAIM_SLACK = 1e-6  # the constants a certificate claims are this much above the prover's values
MAX_NODES = 2000  # lockstep nodes a bounded proof handles (Karp's table is (n+1) x n)


@dataclass(frozen=True)
class BoundedProof:
    steps: int  # every run of at most this many steps is exact
    caps: np.ndarray  # R_n
    weights: np.ndarray  # p_n
    top: float  # rho stays below this: r_n <= p_n top = caps[n]
    region_steps: int
    norm_steps: int  # MAX_STEPS in rescaled mode
    norm: dict  # the scale bounds of plain mode (empty in rescaled mode)
    fixed: bool = False  # the caps are the radii of an all-lengths region proof

    def to_dict(self) -> dict:
        """The certificate's "bounded" entry (region_steps None: the regions hold for every length)."""
        return {"steps": self.steps, "caps": self.caps.tolist(), "p": self.weights.tolist(),
                "top": self.top,
                "region_steps": None if self.fixed else self.region_steps,
                "norm_steps": self.norm_steps, "norm": self.norm}


def max_cycle_mean(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> float:
    """Karp: the largest mean edge weight over the cycles of the graph (-inf when it has none).
    O(n E) time and an (n+1) x n table: callers keep n <= MAX_NODES."""
    D = np.full((n + 1, n), -np.inf)
    D[0] = 0.0  # every node may start a walk
    for k in range(1, n + 1):
        np.maximum.at(D[k], dst, D[k - 1][src] + w)
    with np.errstate(invalid="ignore"):
        ks = np.arange(n)[:, None]
        ratios = np.where(np.isfinite(D[:n]), (D[n] - D[:n]) / (n - ks), np.inf)
    best = np.where(np.isfinite(D[n]), ratios.min(axis=0), -np.inf)
    return float(best.max()) if best.size else -np.inf


def cycle_factor(n: int, src: np.ndarray, dst: np.ndarray, logs: np.ndarray):
    """(mean, pi): log factors <= mean + pi_m - pi_n on every edge, mean slightly above the largest
    cycle mean (checked, not assumed); (None, None) if that fails."""
    if len(logs) == 0:
        return 0.0, np.zeros(n)
    if n > MAX_NODES:  # Karp's table would not fit: no bounded proof for graphs this large
        return None, None
    mean = max_cycle_mean(n, src, dst, logs)
    mean = 0.0 if mean == -np.inf else mean + CYCLE_SLACK * (1 + abs(mean))
    pi = longest_paths(n, src, dst, logs - mean)  # pi_m >= pi_n + log - mean on every edge
    if pi is None:
        return None, None
    return float((logs + pi[src] - pi[dst]).max()), pi  # the mean these potentials really need


def passes_to_exceed(M: np.ndarray, limit: float, cap: int = 10**15) -> int | None:
    """Smallest p with rho_p > limit or undefined, rho_p = (M^p)[0, 1] / (M^p)[1, 1] the p-fold
    linear-fractional map rho -> (M00 rho + M01) / (M10 rho + M11) from 0; None if above cap."""
    def fails(P):
        den = P[1, 1]
        return den <= 0 or P[0, 1] / den > limit

    powers, p = [M], 1
    while not fails(powers[-1]):
        if p >= cap:
            return None
        nxt = powers[-1] @ powers[-1]
        powers.append(nxt / np.abs(nxt).max())
        p *= 2
    acc, count = np.eye(2), 0  # binary search below the failing power of two
    for i in range(len(powers) - 2, -1, -1):
        trial = powers[i] @ acc
        if not fails(trial):
            acc, count = trial / np.abs(trial).max(), count + (1 << i)
    return count + 1


def rho_map(bounds: EdgeBounds, p: np.ndarray, s: float):
    """F(rho): the next max_n r[n] / p_n when every r[n] <= p_n rho (inf past a pole). Each of its
    pieces is (A + G rho) / (B - K rho), convex and increasing, so F and F(rho) - rho are convex."""
    src, dst = bounds.src, bounds.dst
    A = (bounds.a0 * (1 + s) / p[dst])[:, None] * (1 + CLAIM_SLACK)
    G = ((bounds.G + bounds.x1[:, None]) * (1 + s) * (p[src] / p[dst])[:, None]) * (1 + CLAIM_SLACK)
    B = (bounds.b0 * (1 - s))[:, None]
    K = (bounds.K + bounds.y1[:, None]) * (1 - s) * p[src][:, None] * (1 + CLAIM_SLACK)

    def F(rho: float) -> float:
        den = B - K * rho
        return float(np.where(den > 0, (A + G * rho) / np.where(den > 0, den, 1.0), np.inf).max())

    with np.errstate(divide="ignore"):
        pole = float(np.where(K > 0, B / np.where(K > 0, K, 1.0), np.inf).min())
    return F, pole


def orbit_steps(F, top: float, cap: int = MAX_STEPS) -> int:
    """A lower bound on the steps rho_(t+1) = F(rho_t) takes from 0 to pass `top`. F is increasing
    and g = F - id convex, so on [lo, hi] each step adds at most max(g(lo), g(hi)), and the orbit
    enters the interval below lo + g(lo): it spends at least (hi - lo) / max(g(lo), g(hi)) - 1 steps
    there. Intervals adapt so that g changes by at most a quarter across each. `cap` if some F(lo)
    <= lo (the orbit never passes lo: a bound for every length)."""
    lo, total = 0.0, 0
    while lo < top and total < cap:
        g_lo = F(lo) - lo
        if g_lo <= 0:
            return cap
        width = max(64 * g_lo, lo / 4)
        while True:
            hi = min(lo + width, top)
            g_hi = F(hi) - hi
            if g_hi <= 1.25 * g_lo or width <= g_lo:
                break
            width /= 2
        total += max(0, math.floor((hi - lo) / max(g_lo, g_hi)) - 1)
        lo = hi
    return min(total, cap)


def region_plan(bounds: EdgeBounds, limits: np.ndarray, s: float, nodes: int):
    """(F, p, top): p from the cycle means of the gains at r = 0, F the map of rho = max_n r[n] / p_n,
    top the largest rho the margins allow (and half-way to F's nearest pole); None if none."""
    b0 = bounds.b0 * (1 - s)
    if len(b0) == 0 or (b0 <= 0).any():
        return None
    gains = bounds.a1 * (1 + s) / b0
    with np.errstate(divide="ignore"):
        mean, pi = cycle_factor(nodes, bounds.src, bounds.dst, np.log(np.maximum(gains, 1e-300)))
    if mean is None:
        return None
    p = np.exp(pi - pi.max())
    F, pole = rho_map(bounds, p, s)
    # a hair inside the margins: at the limit itself the checker's margin is 0 up to rounding
    top = min(float((np.minimum(limits, 1.0) / p).min()) * (1 - CLAIM_SLACK), 0.5 * pole)
    return (F, p, top) if top > 0 else None


def claimed_steps(steps: int) -> int:
    """What a certificate claims of a lower bound found: a little less (the checker's F differs a hair)."""
    return steps if steps >= MAX_STEPS else max(0, math.floor(steps * 0.99) - 1)


def scale_range(bounds: EdgeBounds, caps: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Per edge, the factor by which lambda changes, for source radii up to caps: [lo, hi]."""
    r = caps[bounds.src]
    lo = (bounds.b0 - bounds.b1 * r) * (1 - s)
    hi = (2 * bounds.beta - bounds.b0 + bounds.b1 * r) * (1 + s)
    return lo, hi


def ceiling_log(weights) -> float:
    """log of the largest max|h| whose products with A, B and C stay below 2^100 (no overflow)."""
    norm = max(float(np.abs(W.astype(np.float64)).sum(axis=-1).max())
               for W in (weights.A, weights.B, weights.C))
    return MAX_LOG - math.log(max(norm, 1.0))


def norm_steps(frame: Frame, bounds: EdgeBounds, caps: np.ndarray, s: float, weights) -> tuple[int, dict]:
    """Steps for which max|h| provably stays in [2^-60, ceiling] (plain mode), and the constants."""
    n = len(frame.centres)
    lo, hi = scale_range(bounds, caps, s)
    if (lo <= 0).any():
        return 0, {"reason": "an edge's scale factor may reach 0"}
    hbc, tmax = height_bounds(frame)
    top = np.log(hbc.max(axis=1) + caps * tmax.max(axis=1))
    floor = hbc.max(axis=1) - caps * tmax.max(axis=1)
    if (floor <= 0).any():
        return 0, {"reason": "a region reaches h = 0"}
    grow, pi_hi = cycle_factor(n, bounds.src, bounds.dst, np.log(hi))
    shrink, pi_lo = cycle_factor(n, bounds.src, bounds.dst, -np.log(lo))
    if grow is None or shrink is None:
        return 0, {"reason": "no potentials for the scale factors"}
    grow, shrink = grow + CLAIM_SLACK, shrink + CLAIM_SLACK  # room for the checker's own evaluation
    start = math.log(float(np.abs(weights.h0).max()))
    # log lambda_t <= start + t grow + pi_hi[n] - pi_hi[0]; >= start - t shrink - (pi_lo[n] - pi_lo[0])
    room_up = ceiling_log(weights) - start - float((pi_hi - pi_hi[0] + top).max())
    room_down = start - MIN_LOG - float((pi_lo - pi_lo[0] - np.log(floor)).max())
    if room_up < 0 or room_down < 0:
        return 0, {"reason": "the scale bound leaves float32's safe range at once"}
    up = MAX_STEPS if grow <= 0 else int(min(room_up / grow, MAX_STEPS))
    down = MAX_STEPS if shrink <= 0 else int(min(room_down / shrink, MAX_STEPS))
    return min(up, down), {"grow": grow, "shrink": shrink, "pi_hi": pi_hi.tolist(), "pi_lo": pi_lo.tolist(),
                           "steps_to_overflow": up, "steps_to_underflow": down}


def prove_bounded(frame: Frame, bounds: EdgeBounds, limits: np.ndarray, s: float, *, plain: bool,
                  weights, fixed_caps: np.ndarray | None = None) -> BoundedProof | None:
    """The bounded proof with the most steps over the cap fractions tried (or over `fixed_caps`, the
    radii of an all-lengths region proof, whose region part is then unbounded); None if none holds."""
    nodes = len(frame.centres)
    if fixed_caps is not None:
        if not np.isfinite(fixed_caps).all():
            return None
        kn, norm = norm_steps(frame, bounds, fixed_caps, s, weights) if plain else (MAX_STEPS, {})
        proof = BoundedProof(kn, fixed_caps, np.ones(nodes), float(fixed_caps.max(initial=0.0)), MAX_STEPS,
                             kn, norm, fixed=True)
        return proof if proof.steps > 0 else None
    plan = region_plan(bounds, limits, s, nodes)
    if plan is None:
        return None
    F, p, top_max = plan
    best = None
    for top in top_max * 2.0 ** -np.arange(0, 40, 2):  # plain mode: smaller radii, tighter scale bounds
        k = claimed_steps(orbit_steps(F, top))
        kn, norm = norm_steps(frame, bounds, p * top, s, weights) if plain and k > 0 else (MAX_STEPS, {})
        proof = BoundedProof(min(k, kn), p * top, p, float(top), k, kn, norm)
        if proof.steps > 0 and (best is None or proof.steps > best.steps):
            best = proof
        if not plain or k <= (best.steps if best else 0):
            break  # smaller radii only shorten the region part
    return best


def digits_within(task, steps: int, cap: int = 10**15) -> int:
    """Largest N (<= cap) with the task's step bound on two N-digit operands at most `steps`."""
    def bound(n: int) -> int:
        return task.step_bound(n, n, task.base)

    if bound(1) > steps:
        return 0
    lo, hi = 1, 2
    while hi <= cap and bound(hi) <= steps:
        lo, hi = hi, hi * 2
    hi = min(hi, cap + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if bound(mid) <= steps else (lo, mid)
    return lo
