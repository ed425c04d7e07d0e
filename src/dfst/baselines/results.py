"""Moved to `dfst.results` (the one result type, its files and tables); this old path is kept for
code that imports it. `load_results` here returns the old shape, dicts (Result.to_dict); new code
imports `dfst.results.load_results`, which returns Results."""

from __future__ import annotations

from pathlib import Path

from dfst import results as _results
from dfst.results import (  # noqa: F401
    DISPLAY_COLUMNS,
    MARK_END,
    MARK_START,
    RESULTS_DIR,
    default_path,
    display_rows,
    markdown_table,
    replace_block,
    save_record,
    save_result,
    table_rows,
    write_readme,
)


def load_results(root: Path) -> list[dict]:
    """Every result under `root` as a dict (the old return type of this function)."""
    return [r.to_dict() for r in _results.load_results(root)]
