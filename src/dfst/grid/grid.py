"""An unbounded 2D grid of symbol indices, and the task layout that seeds it.

Coordinates are (row, col); rows grow downwards, columns to the right. Cells never written are
blank, so the grid grows on demand in every direction, negative coordinates included. A `Layout` is
the dense starting picture a task draws (its operands plus a one-cell margin around everything the
expert may touch); fast engines use the dense array, the reference simulator this sparse grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Pos = tuple[int, int]


@dataclass(frozen=True)
class Layout:
    """A task instance drawn on the grid.

    cells: uint8 array of symbol indices (rows, cols); the region the expert works in, plus margin.
    head: where the agent starts, in array coordinates.
    answer: (row, col) of the answer's least significant digit; the answer reads leftwards from it.
    """

    cells: np.ndarray
    head: Pos
    answer: Pos


class Grid:
    """Sparse, unbounded grid: a dict from (row, col) to symbol index; missing cells are blank."""

    def __init__(self, blank: int, cells: dict[Pos, int] | None = None):
        self.blank = blank
        self.cells: dict[Pos, int] = dict(cells or {})

    @classmethod
    def from_array(cls, array: np.ndarray, blank: int) -> Grid:
        rows, cols = np.nonzero(array != blank)
        return cls(blank, {(int(r), int(c)): int(array[r, c]) for r, c in zip(rows, cols)})

    def read(self, pos: Pos) -> int:
        return self.cells.get(pos, self.blank)

    def write(self, pos: Pos, symbol: int) -> None:
        if symbol == self.blank:
            self.cells.pop(pos, None)
        else:
            self.cells[pos] = symbol

    # grid[pos] reads and writes like a dense array, so one step function serves both (grid.world)
    __getitem__ = read
    __setitem__ = write

    def bounds(self, *extra: Pos) -> tuple[int, int, int, int]:
        """(row_min, row_max, col_min, col_max) over written cells and any `extra` positions."""
        points = list(self.cells) + list(extra)
        if not points:
            return (0, 0, 0, 0)
        rows, cols = zip(*points)
        return min(rows), max(rows), min(cols), max(cols)

    def to_array(self, shape: tuple[int, int]) -> np.ndarray:
        """The cells inside rows 0..shape[0]-1, cols 0..shape[1]-1 as a dense array."""
        out = np.full(shape, self.blank, dtype=np.uint8)
        for (r, c), s in self.cells.items():
            if 0 <= r < shape[0] and 0 <= c < shape[1]:
                out[r, c] = s
        return out
