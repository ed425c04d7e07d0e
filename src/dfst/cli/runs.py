"""`dfst report-runs` and `dfst plot-runs`: tables and figures of training runs (docs/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import JsonOption, app, console, show_rows
from dfst.errors import DfstError
from dfst.io import read_json_file
from dfst.train_state import read_metrics

COLUMNS = ("run", "samples", "d", "iterations", "final loss", "robust LG", "probabilistic LG",
           "CPU seconds")


def _summary(run: Path) -> dict:
    return read_json_file(run / "summary.json", f"{run} has no summary.json (not a finished dfst train run)")


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
    show_rows([_row(r) for r in runs], COLUMNS, "training runs", markdown=markdown, as_json=as_json)


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
    if not (run / "metrics.jsonl").exists():
        raise DfstError(f"{run} has no metrics.jsonl (not a dfst train run)")
    return read_metrics(run / "metrics.jsonl")
