"""One closed-loop step of a DFST with the engine's own float32 arithmetic.

`dfst.rollout` runs the DFST inside a numba loop; a proof about the engine must reason about the
very numbers it computes. `engine_step` calls the engine's compiled kernels (`_matvec_t`, `_argmax`)
and then does what `_run_dfst` does with their result (finiteness check, optional rescale by max|h|),
so exploration and rollout share one arithmetic. A test checks the two bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dfst.model import N_MOVES
from dfst.rollout import DfstWeights, _argmax, _matvec_t


@dataclass(frozen=True)
class Step:
    """What the engine does reading one symbol: written symbol, move, next h (None if not finite)."""

    write: int
    move: int
    h: np.ndarray | None


def engine_step(weights: DfstWeights, h: np.ndarray, x: int, rescale: bool) -> Step:
    """The engine's step from float32 `h` reading symbol `x` (h is not modified)."""
    d, k = h.shape[0], weights.B.shape[1]
    out = np.empty(weights.Wt.shape[2], dtype=np.float32)
    _matvec_t(weights.Wt, x, h, out)
    move = int(_argmax(out, d + k, d + k + N_MOVES))
    write = int(_argmax(out, d, d + k))
    nxt = out[:d].copy()
    if not np.isfinite(nxt).all():
        return Step(write, move, None)
    scale = np.abs(nxt).max() if d else np.float32(0)
    if rescale and scale > 0:
        nxt /= scale  # float32 division, as the engine's `h /= scale`
    return Step(write, move, nxt)


def direction(h: np.ndarray) -> np.ndarray:
    """h / max|h| in float64 (h itself if zero): the ray of h, which the readouts depend on."""
    top = float(np.abs(h).max()) if h.size else 0.0
    return h.astype(np.float64) / top if top > 0 else h.astype(np.float64)
