"""`dfst report`: one results table from the eval.json of several checkpoints (README's table), or with
--html DIR a static site of every stored result (docs/report.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dfst.cli.app import CsvOption, JsonOption, MarkdownOption, app, print_json, show_rows
from dfst.errors import DfstError
from dfst.results import REPORT_COLUMNS, RESULTS_DIR, checkpoint_row
from dfst.results.tables import checkpoint_display_row, checkpoint_results


@app.command("report")
def report_command(
    checkpoints: list[Path] = typer.Argument(None, help="Checkpoint directories that dfst eval has run on "
                                             "(none with --html)."),
    html: Path = typer.Option(None, "--html", metavar="DIR", help="Write a static HTML report of the stored "
                              "results into DIR instead (tables, curves, automata, animated runs)."),
    results: Path = typer.Option(RESULTS_DIR, "--results", help="With --html: the stored results."),
    runs: Path = typer.Option(Path("runs/reproduce"), "--runs", help="With --html: dfst reproduce's runs, "
                              "for training curves and extracted automata (left out where missing), and "
                              "your own dfst train runs under it (each shown, or said why not)."),
    force: bool = typer.Option(False, "--force", help="With --html: replace a report dfst wrote in DIR."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """Tabulate length-generalisation results of evaluated checkpoints, or (--html) write a report of
    every stored result."""
    if html is not None:
        if checkpoints:
            raise DfstError("--html reports the stored results (--results, --runs); give no checkpoints")
        if markdown or as_csv:
            raise DfstError("--markdown and --csv are for the table of checkpoints, not --html")
        return _write_html(html, results, runs, force, as_json)
    if not checkpoints:
        raise DfstError("give checkpoint directories to tabulate, or --html DIR for a report of the stored "
                        "results")
    evaluated = checkpoint_results(checkpoints)
    raw = [checkpoint_row(r) for r in evaluated]
    if as_json:
        return print_json(raw)
    show_rows([checkpoint_display_row(r) for r in evaluated], REPORT_COLUMNS,
              "length generalisation (dfst eval)", markdown=markdown, as_csv=as_csv, raw=raw)


def _write_html(out: Path, results: Path, runs: Path, force: bool, as_json: bool) -> None:
    """Write the site; say where it is and what it could not show (stderr, or in the JSON)."""
    from dfst.studies.html import build_report

    page, material = build_report(results, runs, out, force=force)
    size = page.stat().st_size
    if as_json:
        return print_json({"page": str(page), "bytes": size, "tasks": [t.name for t in material.tasks],
                           "results": len(material.results), "missing": material.missing,
                           "runs": [str(r.path) for r in material.own_runs]})
    for note in material.missing:
        print(f"dfst: note: {note}", file=sys.stderr)
    own = f", {len(material.own_runs):,} training runs of your own" if material.own_runs else ""
    print(f"wrote {page} ({size / 1024:,.0f} KiB): {len(material.results):,} results, "
          f"{len(material.tasks)} tasks{own}; open it in a browser (no network needed)")
