"""The report's tables as HTML: `dfst table`'s comparison and `dfst reproduce`'s summary, the very rows
those commands print (dfst.results.tables, dfst.studies.reproduce), escaped.

Every row carries `data-system` and `data-task`, every cell `data-column`, so that a test (or a reader's
script) finds a number without relying on the column order.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from dfst.results import DISPLAY_COLUMNS, Result, display_rows, table_rows


def comparison_table(results: Sequence[Result]) -> str:
    """Every system on every task, aggregated over seeds as `dfst table` does."""
    return html_table(display_rows(table_rows(results)), DISPLAY_COLUMNS, "comparison")


def reproduce_table(results: Sequence[Result]) -> str:
    """The DFST rows per task as `dfst reproduce` summarises them; an empty string where there are none."""
    from dfst.studies.reproduce import COLUMNS, display, summary_rows
    from dfst.studies.seeds import SYSTEMS
    from dfst.train.recipes import TARGET_DIGITS

    ours = [r for r in results if r.system in SYSTEMS and r.task in TARGET_DIGITS
            and {"first_failing_digits", "d"} <= set(r.details)]  # what dfst reproduce stores
    if not ours:
        return ""
    return html_table([display(row) for row in summary_rows(ours)], COLUMNS, "reproduce")


def html_table(rows: list[dict], columns: Sequence[str], name: str) -> str:
    """A plain <table>: a header row, then one row per dict; integers with thousands separators."""
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "\n".join(_row(row, columns) for row in rows)
    return (f'<table class="results" id="table-{escape(name)}">\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>")


def _row(row: dict, columns: Sequence[str]) -> str:
    cells = "".join(f'<td data-column="{escape(c)}">{escape(_text(row[c]))}</td>' for c in columns)
    return (f'<tr data-system="{escape(str(row.get("system", "")))}" '
            f'data-task="{escape(str(row.get("task", "")))}">{cells}</tr>')


def _text(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
