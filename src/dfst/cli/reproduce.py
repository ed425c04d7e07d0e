"""`dfst reproduce`: train each task over seeds with its recipe, evaluate, store results, tabulate."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import typer

from dfst.cli.app import JsonOption, app, console, print_json, show_rows
from dfst.errors import DfstError

MARK_START, MARK_END = "<!-- reproduce:start -->", "<!-- reproduce:end -->"
COLUMNS = ("task", "system", "seeds", "samples", "max train digits", "d", "params", "robust at target",
           "robust LG (median, min)", "probabilistic LG (median)", "first failing length",
           "CPU s/seed (median, max)")


@app.command("reproduce")
def reproduce_command(
    tasks: str = typer.Option("add2", "--tasks", help="Comma-separated tasks (add2, add10, mult2, mult10); "
                              "TASK:N runs N seeds of that task instead of --seeds."),
    seeds: int = typer.Option(10, "--seeds", help="Seeds 0 .. N-1 (from --first-seed)."),
    first_seed: int = typer.Option(0, "--first-seed"),
    runs: Path = typer.Option(Path("runs/reproduce"), "--runs", help="Where the training runs go."),
    results: Path = typer.Option(Path("results/dfst"), "--results", help="Where the result JSONs go."),
    iters: int = typer.Option(None, "--iters", help="Override the recipe's iterations."),
    restarts: int = typer.Option(None, "--restarts", help="Override the recipe's restarts."),
    time_budget: float = typer.Option(300.0, "--time-budget", help="Evaluation seconds per model."),
    readme: Path = typer.Option(None, "--readme", help="Rewrite this README's reproduce block."),
    rerun: bool = typer.Option(False, "--rerun", help="Train and evaluate again a seed whose stored result "
                               "or run was made with other settings (replacing dfst's own files)."),
    accept_stored: bool = typer.Option(False, "--accept-stored", help="Use stored results made with other "
                                       "settings as they are (said on stderr)."),
    as_json: bool = JsonOption,
) -> None:
    """Train every task over seeds (recipes in dfst.recipes), evaluate the trained DFST and the
    automaton read off it up to the task's target length, and print the table.

    A stored result is reused only if it was made with the same training config and evaluation
    protocol; otherwise pass --rerun or --accept-stored."""
    from dfst.reproduce import reproduce
    from dfst.run_guard import command_line

    plan = seed_plan(tasks, seeds, first_seed)
    overrides = check_overrides(iters, restarts, time_budget)
    if rerun and accept_stored:
        raise DfstError("--rerun and --accept-stored exclude each other: pick one")

    def report(task: str, seed: int, records: list[dict]) -> None:
        if not as_json:
            console.print(f"{task} seed {seed}: " + ", ".join(
                f"{r['system']} robust to {r['robust_lg']:,}" for r in records)
                + f" ({records[0]['train_seconds']} CPU s)")

    rows = reproduce(plan, runs, results, time_budget=time_budget, overrides=overrides, on_seed=report,
                     rerun=rerun, accept_stored=accept_stored, command=command_line(),
                     warn=lambda text: print(f"dfst: note: {text}", file=sys.stderr))
    if readme is not None:
        from dfst.outputs import rewrite_between

        rewrite_between(readme, MARK_START, MARK_END, markdown(rows))
    if as_json:
        return print_json(rows)
    show_rows([display(r) for r in rows], COLUMNS, "dfst reproduce", markdown=False, as_json=False)


def check_overrides(iters: int | None, restarts: int | None, time_budget: float) -> dict:
    """The recipe overrides given, checked before any work: counts >= 1, a finite positive budget."""
    for option, value in (("--iters", iters), ("--restarts", restarts)):
        if value is not None and value < 1:
            raise DfstError(f"{option} must be >= 1, got {value}")
    if not (math.isfinite(time_budget) and time_budget > 0):
        raise DfstError(f"--time-budget must be a positive number of seconds, got {time_budget}")
    return {k: v for k, v in (("iters", iters), ("restarts", restarts)) if v is not None}


def seed_plan(tasks: str, seeds: int, first_seed: int) -> dict[str, list[int]]:
    """`--tasks add2,mult10:1` with --seeds 10 -> {"add2": seeds 0-9, "mult10": seed 0} (from first_seed)."""
    from dfst.recipes import RECIPES

    if seeds < 1 or first_seed < 0:
        raise DfstError(f"need --seeds >= 1 and --first-seed >= 0, got {seeds} and {first_seed}")
    plan, unknown = {}, []
    for item in filter(None, (t.strip() for t in tasks.split(","))):
        name, _, count = item.partition(":")
        if name not in RECIPES:
            unknown.append(name)
        elif count and (not count.isdigit() or int(count) < 1):
            raise DfstError(f"bad seed count in --tasks {item!r}: want TASK:N with N >= 1")
        else:
            plan[name] = list(range(first_seed, first_seed + (int(count) if count else seeds)))
    if not plan or unknown:
        given = ", ".join(unknown) or "(none given)"
        raise DfstError(f"unknown task(s) {given} (known: {', '.join(RECIPES)})")
    return plan


def display(row: dict) -> dict:
    failing = row["first_failing_min"]
    return {"task": row["task"], "system": row["system"], "seeds": row["seeds"], "samples": row["samples"],
            "max train digits": row["max_train_digits"], "d": row["d"], "params": f"{row['params']:,}",
            "robust at target": f"{row['successes']}/{row['seeds']} at {row['target_digits']:,}",
            "robust LG (median, min)": f"{row['robust_lg_median']:,.0f}, {row['robust_lg_min']:,}",
            "probabilistic LG (median)": f"{row['probabilistic_lg_median']:,.0f}",
            "first failing length": "none" if failing is None else f"{failing:,}",
            "CPU s/seed (median, max)": f"{row['cpu_seconds_median']}, {row['cpu_seconds_max']}"}


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(display(r)[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines) + "\n"
