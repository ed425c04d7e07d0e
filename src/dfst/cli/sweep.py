"""`dfst sweep FILE.toml`: a grid of recipe options x tasks x seeds, serially or on Ray (docs/scaling.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dfst.cli.app import (
    AddressOption,
    CsvOption,
    ExecutorOption,
    JsonOption,
    MarkdownOption,
    WorkersOption,
    app,
    cell_progress,
    check_table_format,
    note,
    print_json,
    show_rows,
)


@app.command("sweep")
def sweep_command(
    spec_file: Path = typer.Argument(..., metavar="FILE.toml",
                                     help="tasks, seeds, \\[fixed] and \\[grid]: docs/scaling.md."),
    executor: str = ExecutorOption,
    address: str = AddressOption,
    workers: int = WorkersOption,
    results: Path = typer.Option(None, "--results", help="Results directory (default results/sweeps/NAME, "
                                 "NAME the file's stem); on a Ray cluster, a path every worker reaches."),
    runs: Path = typer.Option(None, "--runs", help="Training runs (default runs/sweeps/NAME)."),
    rerun: bool = typer.Option(False, "--rerun", help="Train and evaluate again a cell whose results or run "
                               "were made with other settings (replacing dfst's own files)."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """Train and evaluate every cell of a sweep (task x grid point x seed) as dfst reproduce does a
    seed, skip the cells already stored under the same configuration, and print one row per task,
    grid point and system. A failed cell is retried once and reported; exit code 1 if any failed."""
    from dfst.io.locks import command_line
    from dfst.studies import sweep as lib

    check_table_format(markdown, as_csv)
    with cell_progress(0, quiet=as_json) as update:
        report = lib.sweep(spec_file, runs, results, rerun=rerun, executor=executor, address=address,
                           workers=workers, say=note, on_update=update, command=command_line())
    if as_json:
        print_json(report.to_dict())
    else:
        print(f"dfst sweep {spec_file}: {report.cells} cells, {report.skipped} already stored, "
              f"{len(report.failed)} failed ({report.executor}); results in {report.results}",
              file=sys.stderr)
        show_rows([lib.display(r) for r in report.rows], lib.COLUMNS, f"dfst sweep {spec_file.stem}",
                  markdown=markdown, as_csv=as_csv, raw=report.rows)
    for line in report.failed:
        print(f"dfst: failed: {line}", file=sys.stderr)
    if report.failed:
        raise typer.Exit(1)
