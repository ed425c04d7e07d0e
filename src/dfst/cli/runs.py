"""`dfst report-runs` and `dfst plot-runs`: tables and figures of training runs (docs/training.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, print_json
from dfst.errors import DfstError

COLUMNS = ("run", "samples", "d", "iterations", "final loss", "robust LG", "probabilistic LG",
           "CPU seconds")


def _summary(run: Path) -> dict:
    try:
        return json.loads((run / "summary.json").read_text())
    except OSError:
        raise DfstError(f"{run} has no summary.json (not a finished dfst train run)") from None
    except json.JSONDecodeError:
        raise DfstError(f"{run}/summary.json is not valid JSON") from None


def _row(run: Path) -> dict:
    s = _summary(run)
    ev = s.get("eval") or {}
    return {"run": run.name, "samples": s["samples"], "d": s["d"], "iterations": s["iterations"],
            "final loss": f"{s['final_loss']:.2e}" if s.get("final_loss") is not None else "nan",
            "robust LG": ev.get("robust_max_digits"), "probabilistic LG": ev.get("probabilistic_max_digits"),
            "CPU seconds": round(s["seconds"], 1)}


@app.command("report-runs")
def report_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    markdown: bool = typer.Option(False, "--markdown", help="A Markdown table."),
    as_json: bool = JsonOption,
) -> None:
    """One row per training run: final loss and the last closed-loop evaluation."""
    rows = [_row(r) for r in runs]
    if as_json:
        return print_json(rows)
    cells = [[str(row[c]) for c in COLUMNS] for row in rows]
    if markdown:
        print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
        print("\n".join("| " + " | ".join(c) + " |" for c in cells))
        return
    table = Table(*COLUMNS, title="training runs")
    for c in cells:
        table.add_row(*c)
    console.print(table)


@app.command("plot-runs")
def plot_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    out: Path = typer.Option(..., "--out", help="PNG file to write."),
) -> None:
    """Training loss and closed-loop robust length against iterations, one line per run."""
    from dfst.plots import plot_training_runs

    series = {r.name: _read_metrics(r) for r in runs}
    console.print(f"wrote {plot_training_runs(series, out)}")


def _read_metrics(run: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line]
    except OSError:
        raise DfstError(f"{run} has no metrics.jsonl (not a dfst train run)") from None
