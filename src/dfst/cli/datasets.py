"""`dfst data`: record PTO datasets from the expert agents, or inspect one."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dfst.budget import check_recording
from dfst.cli.agents import MaxMemoryOption, memory_bound
from dfst.cli.app import JsonOption, app, console, print_json
from dfst.errors import DfstError
from dfst.outputs import check_output_file
from dfst.tasks import get_task


@app.command("data")
def data_command(
    task_name: str = typer.Argument(None, metavar="TASK"),
    samples: int = typer.Option(20, "--samples", help="Number of PTOs to record."),
    max_digits: int = typer.Option(3, "--max-digits", help="Longest operand, in digits."),
    min_digits: int = typer.Option(1, "--min-digits", help="Shortest operand, in digits."),
    seed: int = typer.Option(0, "--seed"),
    out: Path = typer.Option(None, "--out", help="Dataset file to write (e.g. add2.pto.zip)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file."),
    inspect: Path = typer.Option(None, "--inspect", help="Summarise this dataset file instead."),
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> None:
    """Record the PTOs (symbol read, symbol written, move) of random instances into a dataset file.

    Operand lengths are drawn independently and uniformly from [min-digits, max-digits]; operands
    have a non-zero leading digit. The same seed gives a byte-identical file.
    """
    from dfst.data import record_dataset, save_dataset, summarize

    if inspect is not None:
        return _show_summary(_inspect(inspect), as_json)
    if task_name is None or out is None:
        raise DfstError("give TASK and --out FILE to record a dataset, or --inspect FILE")
    task = get_task(task_name)
    check_output_file(out, force=force)  # before the work, so a bad path costs nothing
    if samples >= 1 and 1 <= min_digits <= max_digits:  # else record_dataset says what is wrong
        check_recording(task, samples, max_digits, memory_bound(max_memory))
    with _progress(as_json) as progress:
        bar = progress.add_task(f"recording {task.name}", total=samples)
        dataset = record_dataset(task, samples, max_digits, seed, min_digits=min_digits,
                                 progress=lambda done: progress.update(bar, completed=done))
    save_dataset(dataset, out, overwrite=force)
    summary = summarize(dataset) | {"file": str(out)}
    _show_summary(summary, as_json)


def _inspect(path: Path) -> dict:
    """The dataset's summary, after the checks `dfst coverage` and `dfst train --data` make: the
    task's operands, every PTO the expert's own run (a dataset of a task this dfst lacks: unchecked)."""
    from dfst.coverage import dataset_instances
    from dfst.data import load_dataset, summarize
    from dfst.tasks import TASKS

    dataset = load_dataset(path)
    if dataset.task in TASKS:
        dataset_instances(TASKS[dataset.task], dataset, f"dataset {path}")
    return summarize(dataset) | {"expert_runs_checked": dataset.task in TASKS}


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True, disable=quiet)


def _show_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        return print_json(summary)
    table = Table("field", "value", title="PTO dataset", show_header=False)
    for key, value in summary.items():
        table.add_row(key, str(value))
    console.print(table)
