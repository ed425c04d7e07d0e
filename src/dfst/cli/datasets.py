"""`dfst data`: record PTO datasets from the expert agents, or inspect one (`dfst.data`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dfst.cli.agents import MaxMemoryOption, memory_option
from dfst.cli.app import (
    AgentOption,
    JsonOption,
    app,
    listing,
    note_agent,
    print_json,
    print_table,
    progress_bar,
)
from dfst.errors import DfstError
from dfst.tasks.own_agent import resolve_task


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
    sampler: str = typer.Option("uniform", "--sampler", help="uniform (the published rule), contexts (the "
                                "PTOs showing the most new pairs of observations first, as dfst train "
                                "samples), cover (every expert rule first) or pairs (every pair of "
                                "consecutive rules first): cover and pairs read the expert's states."),
    agent_file: Path = AgentOption,
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> None:
    """Record the PTOs (symbol read, symbol written, move) of random instances into a dataset file
    (the expert's, or with --agent your agent's; the file keeps the agent).

    Uniform sampler: operand lengths are drawn independently and uniformly from \\[min-digits,
    max-digits]; operands have a non-zero leading digit. 20 uniform add2 samples miss rules (dfst
    coverage says which): --sampler contexts picks the instances whose PTOs show the most pairs of
    consecutive observations not yet shown, as dfst train does, from the PTOs alone. The same seed
    gives a byte-identical file.
    """
    from dfst.data import inspect_dataset, record_dataset_file

    if inspect is not None:
        return _show_summary(inspect_dataset(inspect), as_json)
    if task_name is None or out is None:
        raise DfstError("give TASK and --out FILE to record a dataset, or --inspect FILE")
    from dfst.data import SAMPLERS

    if sampler not in SAMPLERS:
        raise DfstError(f"unknown --sampler {sampler!r} (known: {', '.join(SAMPLERS)})")
    if sampler != "uniform" and min_digits != 1:
        raise DfstError(f"--min-digits is the uniform sampler's; --sampler {sampler} starts at 1 digit")
    task = resolve_task(task_name, agent_file)
    note_agent(task, as_json)
    memory = memory_option(max_memory)
    chosen = None if sampler == "uniform" else SAMPLERS[sampler]
    with progress_bar(f"recording {task.name}", samples, quiet=as_json) as update:
        summary = record_dataset_file(task, samples, max_digits, seed, out, min_digits=min_digits,
                                      force=force, max_memory=memory, progress=update, sampler=chosen)
    _show_summary(summary | task.describe(), as_json)


def _show_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        return print_json(summary)
    table = Table("field", "value", title="PTO dataset", show_header=False)
    for key, value in summary.items():  # a list (200,000 unreachable states) shown by its start
        table.add_row(key, listing([str(v) for v in value]) if isinstance(value, list) else str(value))
    print_table(table)
