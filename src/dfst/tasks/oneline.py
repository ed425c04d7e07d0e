"""What the one-operand tasks share (parity2, sort2, reverse2, dyck): the string on one row, random
strings of the task's symbols, and hard strings.

    row 1   . 1 0 1 1 .      the operand, from column 1 (a one-cell blank margin all round)
"""

from __future__ import annotations

from itertools import product

import numpy as np

from dfst.grid.grid import Layout
from dfst.tasks.base import Instance

ROW = 1


def symbol_values(text: str, symbols: tuple[str, ...]) -> np.ndarray:
    """The symbol indices of a validated operand."""
    index = {s: i for i, s in enumerate(symbols)}
    return np.fromiter((index[ch] for ch in text), dtype=np.uint8, count=len(text))


def draw_row(values: np.ndarray, blank: int, *, rows: int = 3, extra_columns: int = 0,
             head: int = 1, answer: tuple[int, int] = (ROW, 0)) -> Layout:
    """`values` on row 1 from column 1, `extra_columns` blank columns after them, and the margin."""
    cells = np.full((rows, len(values) + 2 + extra_columns), blank, dtype=np.uint8)
    cells[ROW, 1: 1 + len(values)] = values
    return Layout(cells, head=(ROW, head), answer=answer)


def random_string(rng: np.random.Generator, n: int, symbols: tuple[str, ...]) -> str:
    """n symbols drawn uniformly (leading zeros included: these are strings, not numbers)."""
    if n < 1:
        raise ValueError(f"strings need at least one symbol, got {n}")
    return "".join(symbols[i] for i in rng.integers(0, len(symbols), size=n))


def hard_strings(n: int, symbols: tuple[str, ...]) -> list[Instance]:
    """Strings of n symbols that exercise the ends and long runs: every string of up to 3 symbols
    padded with runs of each symbol, alternations, one odd symbol at either end or in the middle;
    and every string of one and two symbols, whatever n (rules only the shortest strings reach)."""
    zero, one = symbols[0], symbols[1]
    cases = {f"all_{zero}": zero * n, f"all_{one}": one * n,
             "alternating": (one + zero) * (n // 2) + one * (n % 2),
             "alternating_rev": (zero + one) * (n // 2) + zero * (n % 2),
             "halves": zero * (n // 2) + one * (n - n // 2),
             "halves_rev": one * (n // 2) + zero * (n - n // 2),
             "one_first": one + zero * (n - 1), "one_last": zero * (n - 1) + one,
             "zero_first": zero + one * (n - 1), "zero_last": one * (n - 1) + zero,
             "one_middle": zero * (n // 2) + one + zero * (n - n // 2 - 1),
             "zero_middle": one * (n // 2) + zero + one * (n - n // 2 - 1)}
    for k in (1, 2):  # every string of one and two symbols: rules only they reach (reverse2's n = 1)
        cases |= {f"short_{head}": head for head in _strings(symbols, k)}
    for k in range(1, min(n, 3) + 1):  # every short pattern, at the start and at the end of a run
        for head in _strings(symbols, k):
            for fill in (zero, one):
                cases[f"{head}_then_{fill}"] = head + fill * (n - k)
                cases[f"{fill}_then_{head}"] = fill * (n - k) + head
    seen, out = set(), []
    for name, text in cases.items():
        if (len(text) == n or name.startswith("short_")) and text not in seen:
            seen.add(text)
            out.append(Instance(text, "", name))
    return out


def _strings(symbols: tuple[str, ...], k: int) -> list[str]:
    return ["".join(p) for p in product(symbols, repeat=k)]
