"""A run of the reference simulator as pictures: one frame of the grid per step.

`dfst solve --animate` draws these on the terminal, `dfst report --html` embeds them in the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from dfst.automata import Transducer
from dfst.grid.grid import Layout, Pos
from dfst.grid.world import step_agent


@dataclass(frozen=True)
class Frame:
    """The grid before step `step` (after the last one where `halted`): the agent's state, its head,
    and a copy of the layout's cells."""

    step: int
    state: str
    head: Pos
    cells: np.ndarray
    halted: bool = False


def run_frames(agent: Transducer, layout: Layout, max_steps: int) -> Iterator[Frame]:
    """One frame per step until the agent halts (then a last frame after its halting step), lacks a
    rule or leaves the layout (a dense array holds the frames)."""
    cells, head, state = layout.cells.copy(), layout.head, agent.initial
    for t in range(max_steps):
        yield Frame(t, state, head, cells.copy())
        step = step_agent(agent, cells, head, state)
        if step is None:
            return
        if step.halted:
            yield Frame(t + 1, step.state, head, cells.copy(), halted=True)
            return
        head, state = step.head, step.state
        if not (0 <= head[0] < cells.shape[0] and 0 <= head[1] < cells.shape[1]):
            return
