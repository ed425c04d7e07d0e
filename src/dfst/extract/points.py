"""The points every PTO-based method clusters: a DFST's teacher-forced hidden states, scaled.

The model is fed the symbols the expert read (its own training PTOs, no other data) and each hidden
state is scaled by its max-abs entry, the ray that the argmax readouts depend on. The states are
computed unnormalised in float64 and brought back by exact powers of two, so the scaled points are
the bits of the plain float64 recurrence while h never overflows on long PTOs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# One PTO step as the methods see it: (index of h before, read, write, move, index of h after).
Step = tuple[int, int, int, int, int]


def teacher_forced_points(weights: Sequence[np.ndarray], traces: Sequence[np.ndarray]
                          ) -> tuple[np.ndarray, list[Step]]:
    """Scaled hidden states (n, d) and steps (from, read, write, move, to) over every PTO.

    `weights` is (A, B, C, h0); `traces` holds one (T, 3) array of (read, write, move) per PTO."""
    A, _, _, h0 = (np.asarray(w).astype(np.float64) for w in weights)
    points, steps = [], []
    for trace in traces:
        h = h0
        points.append(_scaled(h))
        for x, w, m in trace:
            h = _power_of_two_scaled(A[x] @ h)
            points.append(_scaled(h))
            steps.append((len(points) - 2, int(x), int(w), int(m), len(points) - 1))
    return np.array(points), steps


def _power_of_two_scaled(h: np.ndarray) -> np.ndarray:
    """h brought to max-abs in [0.5, 1) by a power of two: exact, so the scaled points are the same
    bits as without it, but h no longer overflows on long PTOs (a trained mult10 model's did, within
    its 522-step PTOs)."""
    _, exponent = np.frexp(np.abs(h).max())
    return np.ldexp(h, -exponent)  # inf or nan: frexp gives exponent 0, h stays as it is


def _scaled(h: np.ndarray) -> np.ndarray:
    top = np.abs(h).max()
    return h / top if top > 0 else h
