"""`dfst report`: one results table from the eval.json of several checkpoints (README's table)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst import records
from dfst.cli.app import JsonOption, app, show_rows
from dfst.inputs import read_json_file

COLUMNS = ("task", "model", "params", "robust LG", "probabilistic LG", "largest N tested", "h mode",
           "eval seconds")


@app.command("report")
def report_command(
    checkpoints: list[Path] = typer.Argument(..., help="Checkpoint directories that dfst eval has run on."),
    markdown: bool = typer.Option(False, "--markdown", help="A Markdown table (as in README.md)."),
    as_json: bool = JsonOption,
) -> None:
    """Tabulate length-generalisation results of evaluated checkpoints."""
    show_rows([_row(path) for path in checkpoints], COLUMNS, "length generalisation (dfst eval)",
              markdown=markdown, as_json=as_json)


def _row(path: Path) -> dict:
    report = records.eval_report(read_json_file(
        path / "eval.json", f"{path}/eval.json is missing (run dfst eval {path} first)"), f"{path}/eval.json")
    config = records.require(read_json_file(
        path / "config.json", f"{path}/config.json is missing (not a checkpoint)"), {}, f"{path}/config.json")
    provenance = config.get("provenance") if isinstance(config.get("provenance"), dict) else {}
    label = f"{provenance.get('source', '?')} ({path.parent.name}/{path.name})"
    return {"task": report["task"], "model": label,
            "params": config.get("params"), "robust LG": report["robust_max_digits"],
            "probabilistic LG": report["probabilistic_max_digits"],
            "largest N tested": max(lv["digits"] for lv in report["levels"]),
            "h mode": report["mode"], "eval seconds": report.get("seconds")}
