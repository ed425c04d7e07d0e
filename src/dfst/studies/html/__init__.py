"""`dfst report --html DIR`: the stored results as a static site that needs no network to view.

    collect    the results, and per task its training runs and extracted automaton (optional)
    tables     the comparison (`dfst table`) and reproduce tables as HTML
    figures    length-generalisation and training curves (matplotlib SVG, embedded)
    diagram    an agent drawn as inline SVG, in pure Python
    animation  the frames of a closed-loop run, as JSON the page steps through
    assets     the page's inline style sheet and script
    page       index.html put together
    site       the report directory: what may be replaced, and writing it (docs/report.md)
"""

from __future__ import annotations

from pathlib import Path

from dfst.studies.html.collect import Material, collect
from dfst.studies.html.page import render_page
from dfst.studies.html.site import MARKER_FILE, PAGE, check_report_dir, write_report


def build_report(results_dir: Path, runs_dir: Path, out: Path, *,
                 force: bool = False) -> tuple[Path, Material]:
    """Write the report of the results under `results_dir` (and the runs under `runs_dir`, where
    present) into the directory `out`; returns index.html's path and what the report holds."""
    check_report_dir(out, force=force)  # before any work
    material = collect(results_dir, runs_dir)
    summary = {"results": str(results_dir), "runs": str(runs_dir), "tasks": [t.name for t in material.tasks],
               "missing": material.missing}
    return write_report(out, render_page(material), summary, force=force), material


__all__ = ["MARKER_FILE", "PAGE", "Material", "build_report", "check_report_dir", "collect", "render_page"]
