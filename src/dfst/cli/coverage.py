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
from dfst.errors import DfstError
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
    from dfst.data.coverage import coverage_report, file_instances
    from dfst.data.samplers import check_coverage_values, sampled_instances
    from dfst.tasks.own_agent import resolve_task

    task = resolve_task(task_name, agent_file)
    note_agent(task, as_json)
    _check_options(data, samples, max_digits, minimal)
    check_coverage_values(max_digits, samples, seed, pool, sampler)
    _check_work(task, samples, max_digits, sampler, pool if minimal else None, memory_bound(max_memory))
    if minimal:
        report = _minimal_report(task, max_digits, seed, pool, as_json) | task.describe()
        return _show_minimal(report, as_json)
    if data is not None:
        instances, source = file_instances(task, data)
    else:
        instances, source = sampled_instances(task, samples, max_digits, seed, sampler)
    _show_coverage(coverage_report(task, instances) | {"source": source} | task.describe(), as_json)


def _check_options(data, samples, max_digits, minimal) -> None:
    """Which options go together (their values: `dfst.data.samplers.check_coverage_values`)."""
    if minimal and (data is not None or samples is not None):
        raise DfstError("--minimal searches its own instances: drop --data and --samples")
    if data is not None and (samples is not None or max_digits is not None):
        raise DfstError("give either --data FILE or --samples N --max-digits L, not both")
    if data is None and not minimal and samples is None:
        raise DfstError("give --data FILE, --samples N --max-digits L, or --minimal --max-digits L")
    if data is None and max_digits is None:
        raise DfstError("--max-digits L is needed with --samples and --minimal")


def _check_work(task, samples, max_digits, sampler, pool, max_memory: int) -> None:
    """The expert's replays of --samples or --minimal (on the step bound) and the instances they hold,
    against the replay_steps cap and --max-memory, before any instance is drawn (a --data file is
    bounded by the dataset caps)."""
    from dfst.data.cover_search import estimate_minimal
    from dfst.tasks.budget import check_estimate, estimate_coverage

    if pool is not None:
        estimate = estimate_minimal(task, max_digits, pool)
        what = f"--minimal over a pool of {pool:,} candidates of up to {max_digits:,} digits"
    elif samples is not None:
        estimate = estimate_coverage(task, samples, max_digits, sampler)
        what = f"{samples:,} instances of up to {max_digits:,} digits (--sampler {sampler})"
    else:
        return
    check_estimate(estimate, max_memory, what)


def _minimal_report(task, max_digits, seed, pool, quiet) -> dict:
    """`dfst.data.cover_search.minimal_report` with a progress bar while the candidates are replayed."""
    from dfst.data.cover_search import minimal_report

    with progress_bar(f"replaying {task.name} candidates", quiet=quiet) as update:
        update(0)  # on screen while the candidates are drawn, before the first count
        return minimal_report(task, max_digits, seed, pool, progress=update)


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
