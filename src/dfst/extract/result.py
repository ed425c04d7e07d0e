"""What every extraction method returns."""

from __future__ import annotations

from dataclasses import dataclass

from dfst.automata import HALT_MOVE, MOVE_INDEX, Transducer

HALT = -1                      # the target of a halting step, in every method's tables
STOP = MOVE_INDEX[HALT_MOVE]   # a step halts iff its move is S (dfst.automata: the one convention)
FINAL = "halt"                 # the final state of every extracted transducer


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
