"""Text and ANSI pictures of a grid, with the head highlighted.

Blanks show as '·'. Wide grids are cropped to a window around the head so that a 10^6-digit run
still renders as one screen; the picture says which columns it shows.
"""

from __future__ import annotations

import numpy as np

BLANK_GLYPH = "·"
HEAD_STYLE = "\x1b[1;30;43m"   # bold black on yellow
ANSWER_STYLE = "\x1b[1;36m"    # bold cyan for the answer row
RESET = "\x1b[0m"


def render_cells(cells: np.ndarray, alphabet: tuple[str, ...], blank: int, *,
                 head: tuple[int, int] | None = None, answer_row: int | None = None,
                 color: bool = True, max_width: int = 72) -> str:
    """One line per grid row; `head` is highlighted, `answer_row` tinted."""
    lo, hi = _window(cells.shape[1], head, max_width)
    lines = []
    for r in range(cells.shape[0]):
        glyphs = []
        for c in range(lo, hi):
            glyph = BLANK_GLYPH if cells[r, c] == blank else alphabet[cells[r, c]]
            if color and head == (r, c):
                glyph = f"{HEAD_STYLE}{glyph}{RESET}"
            elif color and r == answer_row and cells[r, c] != blank:
                glyph = f"{ANSWER_STYLE}{glyph}{RESET}"
            elif not color and head == (r, c):
                glyph = f"[{glyph}]"
            glyphs.append(glyph)
        sep = " " if color else ""
        lines.append(f"{r:>3} " + sep.join(g if color or len(g) > 1 else f" {g} " for g in glyphs))
    if (lo, hi) != (0, cells.shape[1]):
        lines.append(f"    (columns {lo}..{hi - 1} of 0..{cells.shape[1] - 1})")
    return "\n".join(lines)


def _window(width: int, head: tuple[int, int] | None, max_width: int) -> tuple[int, int]:
    """Columns to show: all of them, or `max_width` centred on the head (right end otherwise)."""
    if width <= max_width:
        return 0, width
    centre = head[1] if head is not None else width - max_width // 2
    lo = min(max(0, centre - max_width // 2), width - max_width)
    return lo, lo + max_width
