"""The region proof: radii r_n with r_m >= bound(r_n) on every edge and r_n below every margin.

Value iteration from r = 0 (the representative of the initial node is h0 itself) raises each
successor's radius to what its incoming edges demand. It converges when every cycle's deviations
shrink or nothing feeds them; then the radii are inflated slightly and checked once more as a
post-fixed point, which by induction over the input proves every reachable h stays in its region.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dfst.certify.bounds import EdgeBounds, edge_bounds, margin_limits, slack
from dfst.certify.frame import MAX_CONDITION, Frame, make_frame
from dfst.certify.lockstep import HALT, Graph
from dfst.certify.norms import deviation_weights
from dfst.grid.rollout import DfstWeights

MAX_ROUNDS = 20000
INFLATE = 1 + 1e-6


@dataclass
class RegionProof:
    ok: bool
    frame: Frame
    bounds: EdgeBounds
    limits: np.ndarray  # largest radius each node's margins tolerate
    radii: np.ndarray  # certified radii when ok, else where the iteration stopped
    reason: str = ""


def readouts(graph: Graph, weights: DfstWeights, tables) -> list[tuple[int, np.ndarray, int]]:
    """(node, score matrix, wanted row) for the symbol and move readouts of every edge."""
    _, wrt, mov = tables
    out = []
    for (n, x), _ in graph.edges.items():
        q = graph.nodes[n].q
        out += [(n, weights.B[x], int(wrt[q, x])), (n, weights.C[x], int(mov[q, x]))]
    return out


def prove_regions(graph: Graph, weights: DfstWeights, tables, frame: Frame | None = None) -> RegionProof:
    frame = frame or make_frame(np.array([node.h for node in graph.nodes]))
    edges = [(n, x, m) for (n, x), m in graph.edges.items() if m != HALT]
    frame = dataclasses.replace(frame, omega=deviation_weights(frame, weights.A, edges))
    bounds = edge_bounds(frame, weights.A, edges)
    limits = margin_limits(frame, readouts(graph, weights, tables))
    radii = np.zeros(len(graph.nodes))
    if frame.condition > MAX_CONDITION:
        return RegionProof(False, frame, bounds, limits, radii, f"basis condition {frame.condition:.3g}")
    if (limits < 0).any():
        return RegionProof(False, frame, bounds, limits, radii, "a centre's margin is below the rounding")
    s = slack(frame)
    for _ in range(MAX_ROUNDS):
        demand = np.zeros_like(radii)
        np.maximum.at(demand, bounds.dst, bounds.image_radius(radii[bounds.src], s))
        if (demand > limits).any() or not np.isfinite(demand).all():
            return RegionProof(False, frame, bounds, limits, np.maximum(radii, demand),
                               "radii exceed the margins")
        new = np.maximum(radii, demand)
        if (new <= radii * (1 + 1e-12)).all():
            inflated = radii * INFLATE
            if _post_fixed(bounds, inflated, limits, s):
                return RegionProof(True, frame, bounds, limits, inflated)
            new = inflated
        radii = new
    return RegionProof(False, frame, bounds, limits, radii, f"no fixed point in {MAX_ROUNDS} rounds")


def _post_fixed(bounds: EdgeBounds, radii: np.ndarray, limits: np.ndarray, s: float) -> bool:
    image = bounds.image_radius(radii[bounds.src], s)
    return bool((image <= radii[bounds.dst]).all() and (radii <= limits).all())
