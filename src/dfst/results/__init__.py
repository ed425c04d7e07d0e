"""One result type for every scored system: trained DFSTs, extracted automata and baselines.

    schema   Result: the versioned JSON form ({"format": "dfst-result", "version": 1, ...}), checked
             field by field; files from before the marker read as version 0 (docs/results.md)
    store    result files: default paths, atomic writes, `load_results`, and Results read from a
             checkpoint's eval.json or a run's summary.json
    certified  the certification a result carries, counted over seeds (all lengths / bounded / none)
    tables   `dfst table`'s comparison (aggregated over seeds, README block), and the rows of
             `dfst report` and `dfst report-runs`

`dfst reproduce` (dfst.studies.reproduce) and `dfst baseline` (dfst.baselines) store Results; `table`,
`report`, `report-runs` and `reproduce` read them through here. No torch is imported.
"""

from dfst.results.schema import FIGURES, FORMAT, VERSION, Result, is_result
from dfst.results.store import (
    RESULTS_DIR,
    default_path,
    load_result,
    load_results,
    read_checkpoint_result,
    read_run_result,
    result_bytes,
    save_record,
    save_result,
)
from dfst.results.tables import (
    DISPLAY_COLUMNS,
    MARK_END,
    MARK_START,
    REPORT_COLUMNS,
    RUN_COLUMNS,
    checkpoint_row,
    comparison,
    display_rows,
    markdown_table,
    replace_block,
    report_rows,
    run_row,
    run_rows,
    table_rows,
    write_readme,
)

__all__ = [
    "DISPLAY_COLUMNS", "FIGURES", "FORMAT", "MARK_END", "MARK_START", "REPORT_COLUMNS", "RESULTS_DIR",
    "RUN_COLUMNS", "VERSION", "Result", "checkpoint_row", "comparison", "default_path", "display_rows",
    "is_result", "load_result", "load_results", "markdown_table", "read_checkpoint_result", "read_run_result",
    "replace_block", "report_rows", "result_bytes", "run_row", "run_rows", "save_record", "save_result",
    "table_rows", "write_readme",
]
