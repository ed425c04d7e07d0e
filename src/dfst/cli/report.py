"""`dfst report`: one results table from the eval.json of several checkpoints (README's table)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import CsvOption, JsonOption, MarkdownOption, app, show_rows
from dfst.results import REPORT_COLUMNS, report_rows


@app.command("report")
def report_command(
    checkpoints: list[Path] = typer.Argument(..., help="Checkpoint directories that dfst eval has run on."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """Tabulate length-generalisation results of evaluated checkpoints."""
    show_rows(report_rows(checkpoints), REPORT_COLUMNS, "length generalisation (dfst eval)",
              markdown=markdown, as_csv=as_csv, as_json=as_json)
