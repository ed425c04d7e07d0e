"""Fast closed-loop execution on the grid (the hot path).

`run_table` runs an automaton given as integer lookup tables inside a numba loop over a dense grid:
one step is a table lookup, a write and a move. It halts on the move S, and reports a missing rule,
the step limit, or leaving the layout's region. Tested equal to the reference simulator
(`dfst.grid.world.run_agent`) on every task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from dfst.automata import MOVE_INDEX, Transducer
from dfst.grid.grid import Layout
from dfst.grid.world import Outcome

# Outcome codes shared with the compiled kernels.
OUTCOMES = (Outcome.HALTED, Outcome.STEP_LIMIT, Outcome.NO_RULE, Outcome.OFF_LAYOUT,
            Outcome.NON_FINITE)
HALTED, STEP_LIMIT, NO_RULE, OFF_LAYOUT, NON_FINITE = range(len(OUTCOMES))
_DR = np.array([-1, 1, 0, 0, 0], dtype=np.int64)  # row change per move, in MOVES order
_DC = np.array([0, 0, -1, 1, 0], dtype=np.int64)
_STOP = MOVE_INDEX["S"]


@dataclass
class TableRun:
    """Result of one compiled run; `cells` is the final grid (the layout's array, updated)."""

    outcome: Outcome
    steps: int
    head: tuple[int, int]
    state: int
    cells: np.ndarray
    trace: np.ndarray  # (steps, 3) read, write, move; empty unless recorded


@numba.njit(cache=True, nogil=True)
def _run_table(nxt, wrt, mov, cells, r, c, q, max_steps, trace):
    record = trace.shape[0] > 0
    rows, cols = cells.shape
    for t in range(max_steps):
        x = cells[r, c]
        m = mov[q, x]
        if m < 0:
            return NO_RULE, t, r, c, q
        cells[r, c] = wrt[q, x]
        if record:
            trace[t, 0], trace[t, 1], trace[t, 2] = x, wrt[q, x], m
        q = nxt[q, x]
        if m == _STOP:
            return HALTED, t + 1, r, c, q
        r += _DR[m]
        c += _DC[m]
        if r < 0 or r >= rows or c < 0 or c >= cols:
            return OFF_LAYOUT, t + 1, r, c, q
    return STEP_LIMIT, max_steps, r, c, q


def run_table(agent: Transducer, layout: Layout, max_steps: int, *, record: bool = False) -> TableRun:
    """Run `agent` compiled to lookup tables on a copy of the layout's grid."""
    nxt, wrt, mov = agent.tables()
    cells = layout.cells.copy()
    trace = np.zeros((max_steps if record else 0, 3), dtype=np.uint8)
    code, steps, r, c, q = _run_table(nxt, wrt, mov, cells, layout.head[0], layout.head[1],
                                      agent.states.index(agent.initial), max_steps, trace)
    return TableRun(OUTCOMES[code], int(steps), (int(r), int(c)), int(q), cells, trace[:steps])
