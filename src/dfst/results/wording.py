"""A length generalisation in words, the same everywhere dfst prints one (tables, plots, reports).

A robust LG of 0 means the first tested length already failed; dfst says so, and which length it
was, rather than "robust to 0 digits". A level is a protocol level: a dict with "digits" and the
verdicts ("robust", "probabilistic").
"""

from __future__ import annotations

from collections.abc import Sequence


def first_tested(levels: Sequence[dict]) -> int | None:
    """The shortest length tested (None: none was)."""
    return min((lv["digits"] for lv in levels), default=None)


def evaluated(lg: int | None, levels: Sequence[dict]) -> bool:
    """An LG of None, or 0 with no level behind it, is no measure at all."""
    return lg is not None and bool(lg or levels)


def lg_words(lg: int | None, levels: Sequence[dict], kind: str = "robust") -> str:
    """'robust to 1,000 digits', 'fails at the first tested length (10 digits)' or 'not evaluated';
    `kind` "probabilistic" for the random pairs' LG ('probabilistic: fails at ...')."""
    if not evaluated(lg, levels):
        return "not evaluated"
    if lg:
        return f"{kind} to {lg:,} digits"
    who = "fails" if kind == "robust" else f"{kind}: fails"
    return f"{who} at the first tested length ({first_tested(levels):,} digits)"


def lg_cell(lg: int | None, levels: Sequence[dict]) -> str:
    """The same, short, for a table cell: '1,000', 'none: fails at 10' or 'not evaluated'."""
    if not evaluated(lg, levels):
        return "not evaluated"
    return f"{lg:,}" if lg else f"none: fails at {first_tested(levels):,}"
