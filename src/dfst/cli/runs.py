"""`dfst report-runs` and `dfst plot-runs`: tables and figures of training runs
(docs/research/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import CsvOption, JsonOption, MarkdownOption, app, console, show_rows
from dfst.errors import DfstError
from dfst.results import RUN_COLUMNS, run_rows


@app.command("report-runs")
def report_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """One row per training run: final loss and the closed-loop evaluation the run made itself (at
    its --eval-digits; `dfst eval RUN` measures further)."""
    title = "training runs (LG as each run evaluated it, at its --eval-digits; dfst eval RUN goes further)"
    show_rows(run_rows(runs), RUN_COLUMNS, title, markdown=markdown, as_csv=as_csv, as_json=as_json)


@app.command("plot-runs")
def plot_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    out: Path = typer.Option(..., "--out", help="Figure to write: FILE.png, FILE.svg or FILE.pdf."),
    force: bool = typer.Option(False, "--force", help="Replace an existing figure that dfst wrote."),
) -> None:
    """Training loss and closed-loop robust length against iterations, one line per run."""
    from dfst.io.outputs import check_output_file
    from dfst.results.plots import FORMATS, plot_training_runs
    from dfst.train.rundir import checked_metrics

    if out.suffix.lower() not in FORMATS:
        raise DfstError(f"--out {out}: a figure is written as {', '.join(FORMATS)} (the suffix decides)")
    check_output_file(out, force=force)
    series = {label: checked_metrics(r) for label, r in zip(run_labels(runs), runs)}
    console.print(f"wrote {plot_training_runs(series, out)}")


def run_labels(runs: list[Path]) -> list[str]:
    """A legend label per run: its directory's name, with as many parent directories as it takes to
    tell runs of the same name apart (sweep/a/s0 and sweep/b/s0: a/s0 and b/s0)."""
    paths = [Path(r).resolve() for r in runs]
    depth = 1
    while depth < max(len(p.parts) for p in paths):
        labels = ["/".join(p.parts[-depth:]) for p in paths]
        if len(set(labels)) == len(set(paths)):
            break
        depth += 1
    labels = ["/".join(p.parts[-depth:]) for p in paths]
    return [f"{label} ({i})" if labels.count(label) > 1 else label for i, label in enumerate(labels, 1)]
