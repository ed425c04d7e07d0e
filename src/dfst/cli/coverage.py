"""`dfst coverage`: which expert rules a training set exercises, and the smallest set exercising all."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dfst.cli.agents import MaxMemoryOption, memory_bound
from dfst.cli.app import (
    AgentOption,
    JsonOption,
    TaskArgument,
    app,
    console,
    note_agent,
    print_json,
    print_table,
    progress_bar,
)
from dfst.tasks import get_task


@app.command("coverage")
def coverage_command(
    task_name: str = TaskArgument,
    data: Path = typer.Option(None, "--data", help="A PTO dataset file (dfst data --out)."),
    samples: int = typer.Option(None, "--samples", help="Draw this many instances with --sampler."),
    max_digits: int = typer.Option(None, "--max-digits", help="Longest operand, in digits."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampler, or of the --minimal pool."),
    sampler: str = typer.Option("uniform", "--sampler", help="uniform, contexts (sees only PTOs), cover or "
                                "pairs (both read the expert's states): dfst.data.samplers."),
    minimal: bool = typer.Option(False, "--minimal", help="Search the smallest covering set instead."),
    pool: int = typer.Option(5000, "--pool", help="--minimal: random candidates when not exhaustive."),
    agent_file: Path = AgentOption,
    max_memory: str = MaxMemoryOption,
    as_json: bool = JsonOption,
) -> None:
    """Which (state, symbol) rules of the expert (or --agent) the PTOs exercise and which never; or, with
    --minimal, a small set of instances of at most --max-digits digits that exercises them all."""
    from dfst.data.coverage_query import CoverageQuery, coverage
    from dfst.tasks.own_agent import resolve_task

    task = resolve_task(task_name, agent_file)
    note_agent(task, as_json)
    query = CoverageQuery(data, samples, max_digits, seed, sampler, minimal, pool, memory_bound(max_memory))
    with progress_bar(f"replaying {task.name} candidates", quiet=as_json) as update:  # --minimal's
        report = coverage(task, query, progress=update)
    if minimal:
        return _show_minimal(report, as_json)
    _show_coverage(report, as_json)


def _show_coverage(report: dict, as_json: bool) -> None:
    if as_json:
        return print_json(report)
    console.print(f"{report['task']}: {report['instances']} instances exercise {report['covered']} of "
                  f"{report['rules']} rules; {len(report['missing'])} never")
    _rule_table(report["missing"], "rules never exercised")


def _show_minimal(report: dict, as_json: bool) -> None:
    if as_json:
        return print_json(report)
    pool, bound = report["pool"], "minimal" if report["proved_minimal"] else f">= {report['lower_bound']}"
    kind = "exhaustive" if pool["exhaustive"] else "sampled"
    console.print(f"{report['task']}, operands of at most {report['max_digits']} digits: "
                  f"{report['size']} instances exercise all {report['reachable']} reachable rules "
                  f"(of {report['rules']}); {bound}; published training set {report['published_samples']}")
    console.print(f"pool: {pool['instances']:,} instances, {pool['distinct_rule_sets']:,} distinct rule "
                  f"sets, {kind}; greedy {report['greedy_size']}; "
                  f"{report['seconds']} s")
    task = get_task(report["task"])
    console.print("instances: " + ", ".join(task.show(a, b).replace(" ", "") for a, b in report["instances"]),
                  highlight=False)
    _rule_table(report["unreachable"], "rules no candidate reaches")


def _rule_table(rules: list[dict], title: str) -> None:
    if not rules:
        return
    table = Table("state", "read", "next", "write", "move", title=title)
    for rule in rules:
        table.add_row(*(rule[k] for k in ("state", "read", "next", "write", "move")))
    print_table(table)
