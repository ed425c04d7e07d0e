"""`dfst report-runs` and `dfst plot-runs`: tables and figures of training runs
(docs/research/training.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import CsvOption, JsonOption, MarkdownOption, app, console, print_json, show_rows
from dfst.errors import DfstError
from dfst.results import RUN_COLUMNS, read_run_result, run_row
from dfst.results.tables import run_display_row


@app.command("report-runs")
def report_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """One row per training run: final loss and the LG of the model the run delivers (RUN/model, the
    one `dfst eval RUN` scores: fine-tuned where the run was), as `dfst eval RUN` measured it where it
    ran, else as the run checked it at its --eval-digits; and the trained weights before fine-tuning."""
    results = [read_run_result(run) for run in runs]
    raw = [run_row(r) for r in results]
    if as_json:
        return print_json(raw)
    title = "training runs: the model each delivers (RUN/model, what dfst eval RUN scores)"
    show_rows([run_display_row(r) for r in results], RUN_COLUMNS, title, markdown=markdown, as_csv=as_csv,
              raw=raw)


@app.command("plot-runs")
def plot_runs_command(
    runs: list[Path] = typer.Argument(..., help="Run directories written by dfst train."),
    out: Path = typer.Option(..., "--out", help="Figure to write: FILE.png, FILE.svg or FILE.pdf."),
    force: bool = typer.Option(False, "--force", help="Replace an existing figure that dfst wrote."),
) -> None:
    """Training loss and closed-loop robust length against iterations, one line per run, and the model
    each run delivers (RUN/model, what dfst eval RUN scores) as a star at its end."""
    from dfst.io.outputs import check_output_file
    from dfst.results.plots import FORMATS, plot_training_runs
    from dfst.train.rundir import checked_metrics

    if out.suffix.lower() not in FORMATS:
        raise DfstError(f"--out {out}: a figure is written as {', '.join(FORMATS)} (the suffix decides)")
    check_output_file(out, force=force)
    labels = run_labels(runs)
    series = {label: checked_metrics(r) for label, r in zip(labels, runs)}
    # the model each finished run delivers (a run still training has none yet)
    delivered = {label: read_run_result(r) for label, r in zip(labels, runs)
                 if (r / "summary.json").is_file()}
    console.print(f"wrote {plot_training_runs(series, out, delivered)}")


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
