"""`dfst report-runs` and `dfst plot-runs`: tables and figures of training runs (docs/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst import records
from dfst.cli.app import JsonOption, app, console, show_rows
from dfst.errors import DfstError
from dfst.inputs import read_json_file

COLUMNS = ("run", "samples", "d", "iterations", "final loss", "robust LG", "probabilistic LG",
           "CPU seconds")


def _summary(run: Path) -> dict:
    path = run / "summary.json"
    return records.summary(read_json_file(path, f"{run} has no summary.json (not a finished dfst train run)"),
                           str(path))


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
    out: Path = typer.Option(..., "--out", help="Figure to write: FILE.png, FILE.svg or FILE.pdf."),
    force: bool = typer.Option(False, "--force", help="Replace an existing figure that dfst wrote."),
) -> None:
    """Training loss and closed-loop robust length against iterations, one line per run."""
    from dfst.outputs import check_output_file
    from dfst.plots import FORMATS, plot_training_runs

    if out.suffix.lower() not in FORMATS:
        raise DfstError(f"--out {out}: a figure is written as {', '.join(FORMATS)} (the suffix decides)")
    check_output_file(out, force=force)
    series = {r.name: _read_metrics(r) for r in runs}
    console.print(f"wrote {plot_training_runs(series, out)}")


METRIC = {"iteration": int}
METRIC_EVAL = {"robust_max_digits": int, "levels": list}


def _read_metrics(run: Path) -> list[dict]:
    """The run's metrics records, each checked for the fields the figure reads."""
    from dfst.train_state import read_metrics  # torch comes with it: not for `dfst --help`
    path = run / "metrics.jsonl"
    if not path.exists():
        raise DfstError(f"{run} has no metrics.jsonl (not a dfst train run)")
    found = read_metrics(path)
    for i, record in enumerate(found):
        where = f"{path} record {i + 1}"
        records.require(record, METRIC, where)
        if "loss" in record:
            records.require(record, {"loss": records.NUMBER}, where)
        if "eval" in record:
            report = records.require(record["eval"], METRIC_EVAL, f"{where} eval")
            if not records.require_list(report["levels"], records.LEVEL, f"{where} eval levels"):
                raise DfstError(f"{where} eval has no levels")
    return found
