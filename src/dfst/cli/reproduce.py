"""`dfst reproduce`: train each task over seeds with its recipe, evaluate, store results, tabulate."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from dfst.cli.app import (
    AddressOption,
    AgentOption,
    CsvOption,
    ExecutorOption,
    JsonOption,
    MarkdownOption,
    WorkersOption,
    app,
    cell_progress,
    check_table_format,
    console,
    note,
    note_agent,
    print_json,
    show_rows,
)


def __getattr__(name: str):
    """`seed_plan`, importable here as before (it lives in dfst.studies.reproduce, which imports torch: loaded
    on first use so that `dfst --help` does not)."""
    if name == "seed_plan":
        from dfst.studies.reproduce import seed_plan

        return seed_plan
    raise AttributeError(f"module 'dfst.cli.reproduce' has no attribute {name!r}")


@contextmanager
def _seed_progress(*, quiet: bool) -> Iterator[Callable[[str, dict], None]]:
    """A transient bar for the seed at work: training's iterations (the fine-tuning phase's too), then
    which model is being evaluated and certified (no total: those take what they take)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True, disable=quiet)
    bar = progress.add_task("", total=None)

    def show(label: str, record: dict) -> None:
        if not progress.live.is_started:
            progress.start()
        if "stage" in record:
            progress.update(bar, description=f"{label}: {record['stage']}", completed=0, total=None)
        else:
            stage = "fine-tuning" if "phase" in record else "training"
            progress.update(bar, description=f"{label}: {stage}", completed=record["iteration"],
                            total=record["iters"])

    try:
        yield show
    finally:
        if progress.live.is_started:
            progress.stop()


@app.command("reproduce")
def reproduce_command(
    tasks: str = typer.Option("add2", "--tasks", help="Comma-separated tasks (the built-in ones); "
                              "TASK:N runs N seeds of that task instead of --seeds, TASK:A-B seeds A to B."),
    seeds: int = typer.Option(10, "--seeds", help="Seeds 0 .. N-1 (from --first-seed)."),
    first_seed: int = typer.Option(0, "--first-seed"),
    runs: Path = typer.Option(Path("runs/reproduce"), "--runs", help="Where the training runs go."),
    results: Path = typer.Option(Path("results/dfst"), "--results", help="Where the result JSONs go."),
    iters: int = typer.Option(None, "--iters", help="Override the recipe's iterations."),
    restarts: int = typer.Option(None, "--restarts", help="Override the recipe's restarts."),
    finetune: bool = typer.Option(True, "--finetune/--no-finetune", help="Run the recipe's fine-tuning "
                                  "phase (--no-finetune: training's weights are the DFST row)."),
    certify: bool = typer.Option(True, "--certify/--no-certify", help="Give every model to dfst certify "
                                 "(plain h) and count the certified seeds."),
    rescale: bool = typer.Option(False, "--rescale", help="Evaluate and certify with h rescaled at every "
                                 "step (the tables before fine-tuning); default plain h."),
    time_budget: float = typer.Option(300.0, "--time-budget", help="Evaluation seconds per model."),
    readme: Path = typer.Option(None, "--readme", help="Rewrite this README's reproduce block."),
    block: str = typer.Option(None, "--block", help="With --readme: rewrite the block marked "
                              "<!-- reproduce:NAME:start --> ... <!-- reproduce:NAME:end --> instead."),
    rerun: bool = typer.Option(False, "--rerun", help="Train and evaluate again a seed whose stored result "
                               "or run was made with other settings (replacing dfst's own files; a "
                               "run of the same config is only scored again, its certification kept)."),
    accept_stored: bool = typer.Option(False, "--accept-stored", help="Use stored results made with other "
                                       "settings as they are (said on stderr)."),
    agent_file: Path = AgentOption,
    executor: str = ExecutorOption,
    address: str = AddressOption,
    workers: int = WorkersOption,
    markdown: bool = MarkdownOption,
    as_csv: bool = CsvOption,
    as_json: bool = JsonOption,
) -> None:
    """Train every task over seeds (recipes in dfst.train.recipes, fine-tuning included), evaluate each
    model of a run up to the task's target length (plain h) and certify it, and print the table:
    "DFST" is RUN/model, "DFST (before fine-tuning)" RUN/trained, "DFST (extracted)" the automaton
    read off the trained weights.

    A stored result is reused only if it was made with the same training config and evaluation
    protocol; otherwise pass --rerun or --accept-stored. With --agent FILE every task of the plan
    learns that agent (on the task's layout) and is scored against its answers; its runs and results
    go by TASK@NAME (NAME: the file's name), its rows by "DFST \\[agent NAME]". With --executor ray
    each seed to train is a Ray task (docs/scaling.md); a seed that fails twice is reported, left out
    of the table, and makes the exit code 1."""
    from dfst.io.locks import command_line
    from dfst.studies import reproduce as lib

    check_table_format(markdown, as_csv)
    plan = lib.plan_reproduce(tasks, seeds, first_seed, iters=iters, restarts=restarts, finetune=finetune,
                              time_budget=time_budget, agent_file=agent_file, rerun=rerun,
                              accept_stored=accept_stored, readme=readme, block=block, executor=executor,
                              say=note, runs=runs, results=results, certify=certify, rescale=rescale,
                              address=address, workers=workers, command=command_line())
    for task in plan.agent_tasks:
        note_agent(task, as_json)
    # with --markdown or --csv, stdout is the table alone: the line per seed goes to stderr
    say = (lambda text: print(text, file=sys.stderr)) if markdown or as_csv else console.print
    failed: list[str] = []
    serial = plan.executor == "serial"
    with _seed_progress(quiet=as_json) if serial else cell_progress(0, quiet=as_json) as show:
        rows = lib.run_reproduce(plan, on_seed=None if as_json else lambda *done: say(lib.seed_line(*done)),
                                 progress=show if serial else None, warn=note,
                                 on_cells=None if serial else show, on_failure=failed.append)
    if as_json:
        return print_json(rows)
    show_rows([lib.display(r) for r in rows], lib.COLUMNS, "dfst reproduce", markdown=markdown, as_csv=as_csv,
              raw=rows)
    for line in failed:
        print(f"dfst: failed: {line}", file=sys.stderr)
    if failed:
        raise typer.Exit(1)
