"""The report's directory: what may be written there, and writing it (docs/safety.md's rules).

A report directory holds `index.html` (with dfst's marker) and `dfst-report.json`, the marker file
that says the directory is dfst's report. dfst writes into a directory that is missing or empty; one
that holds a report of dfst's is replaced only with --force; anything else in it (a user's file, a
link, a file of that name dfst did not write) is refused, before any work.
"""

from __future__ import annotations

from pathlib import Path

from dfst import __version__
from dfst.io.outputs import (
    claim_directory,
    file_kind,
    holds_format,
    is_dfst_file,
    make_directory,
    release_output,
    remove_stale_temporaries,
    write_atomic,
    write_json,
)

PAGE = "index.html"
MARKER_FILE = "dfst-report.json"
FORMAT = "dfst-report"
FILES = (MARKER_FILE, PAGE)


def check_report_dir(out: Path, *, force: bool) -> None:
    """Refuse an output directory dfst should not write into (see the module docstring), or one
    another dfst process is writing; else claim it for this one until `write_report`."""
    claim_directory(out, what="report", own=FILES, is_ours=is_report_dir, force=force)


def is_report_dir(out: Path) -> bool:
    """Does `out` hold dfst's marker file, and is each of the report's files present dfst's own?"""
    return holds_format(out / MARKER_FILE, FORMAT) and all(
        is_dfst_file(out / name) for name in FILES if file_kind(out / name) != "missing")


def write_report(out: Path, page: str, summary: dict, *, force: bool) -> Path:
    """Write the page and the marker file into `out` (checked again here, just before writing); the
    marker first, so that a report cut short by a crash is still known as dfst's."""
    check_report_dir(out, force=force)
    make_directory(out, "report directory")
    remove_stale_temporaries(out, FILES)
    marker = {"format": FORMAT, "version": 1, "dfst_version": __version__, "files": [PAGE]} | summary
    write_json(out / MARKER_FILE, marker)
    write_atomic(out / PAGE, page.encode())
    release_output(out)
    return out / PAGE
