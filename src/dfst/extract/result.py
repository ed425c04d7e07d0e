"""What every extraction method returns."""

from __future__ import annotations

from dataclasses import dataclass

from dfst.automata import FINAL_STATE as FINAL
from dfst.automata import HALT_TARGET as HALT
from dfst.automata import STOP, Transducer

__all__ = ["FINAL", "HALT", "STOP", "Extraction"]


@dataclass(frozen=True)
class Extraction:
    """An automaton read off a model: the transducer, the method, and the method's figures.

    `radius` is the clustering radius (None for methods without one), `clusters` the clusters (or
    lockstep nodes, or learned states) before merging or minimising, `pairs` the (state, symbol)
    pairs with a rule."""

    agent: Transducer
    radius: float | None
    clusters: int
    pairs: int
    method: str = "merge"
