"""`dfst coverage`: which expert rules a training set exercises, and the smallest set exercising all."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dfst.cli.app import JsonOption, app, console, print_json
from dfst.errors import DfstError

PUBLISHED_SAMPLES = {"add2": 20, "add10": 225, "mult2": 750, "mult10": 10_000}  # the paper's training sets


@app.command("coverage")
def coverage_command(
    task_name: str = typer.Argument(..., metavar="TASK"),
    data: Path = typer.Option(None, "--data", help="A PTO dataset file (dfst data --out)."),
    samples: int = typer.Option(None, "--samples", help="Draw this many instances with --sampler."),
    max_digits: int = typer.Option(None, "--max-digits", help="Longest operand, in digits."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampler, or of the --minimal pool."),
    sampler: str = typer.Option("uniform", "--sampler", help="uniform or cover (dfst.train_data)."),
    minimal: bool = typer.Option(False, "--minimal", help="Search the smallest covering set instead."),
    pool: int = typer.Option(5000, "--pool", help="--minimal: random candidates when not exhaustive."),
    as_json: bool = JsonOption,
) -> None:
    """Which (state, symbol) rules of the expert the PTOs exercise and which never; or, with
    --minimal, a small set of instances of at most --max-digits digits that exercises them all."""
    from dfst.tasks import get_task

    task = get_task(task_name)
    _check_options(data, samples, max_digits, seed, sampler, minimal, pool)
    if minimal:
        return _show_minimal(_minimal_report(task, max_digits, seed, pool, as_json), as_json)
    instances, source = _instances(task, data, samples, max_digits, seed, sampler)
    _show_coverage(coverage_report(task, instances) | {"source": source}, as_json)


def _check_options(data, samples, max_digits, seed, sampler, minimal, pool) -> None:
    from dfst.train_data import SAMPLERS

    if minimal and (data is not None or samples is not None):
        raise DfstError("--minimal searches its own instances: drop --data and --samples")
    if data is not None and (samples is not None or max_digits is not None):
        raise DfstError("give either --data FILE or --samples N --max-digits L, not both")
    if data is None and not minimal and samples is None:
        raise DfstError("give --data FILE, --samples N --max-digits L, or --minimal --max-digits L")
    if data is None and max_digits is None:
        raise DfstError("--max-digits L is needed with --samples and --minimal")
    if max_digits is not None and max_digits < 1:
        raise DfstError(f"--max-digits must be at least 1, got {max_digits}")
    if samples is not None and samples < 1:
        raise DfstError(f"--samples must be at least 1, got {samples}")
    if seed < 0 or pool < 0:
        raise DfstError(f"--seed and --pool must be non-negative, got {seed} and {pool}")
    if sampler not in SAMPLERS:
        raise DfstError(f"unknown --sampler {sampler!r} (known: {', '.join(SAMPLERS)})")


def _instances(task, data, samples, max_digits, seed, sampler):
    """(instances, description of where they came from)."""
    from dfst.coverage import dataset_instances
    from dfst.data import load_dataset
    from dfst.tasks import Instance
    from dfst.train_data import SAMPLERS

    if data is not None:
        return dataset_instances(task, load_dataset(data), str(data)), {"data": str(data)}
    ds = SAMPLERS[sampler](task, samples, max_digits, seed)
    source = {"sampler": sampler, "samples": samples, "max_digits": max_digits, "seed": seed}
    return [Instance(a, b) for a, b in ds.operands], source


def coverage_report(task, instances) -> dict:
    """Plain-JSON coverage of the expert's rules by the instances' runs."""
    from dfst.coverage import coverage

    used, missing = coverage(task, instances)
    return {"task": task.name, "instances": len(instances), "rules": len(task.agent.rules),
            "covered": len(used), "used": _rule_list(task, used), "missing": _rule_list(task, missing)}


def _rule_list(task, keys) -> list[dict]:
    order = {q: i for i, q in enumerate(task.agent.states)}
    sym = {s: i for i, s in enumerate(task.alphabet)}
    ordered = sorted(keys, key=lambda key: (order[key[0]], sym[key[1]]))
    return [task.agent.rules[key].__dict__ for key in ordered]


def _minimal_report(task, max_digits, seed, pool, quiet) -> dict:
    from dfst.cover_search import is_irredundant, minimal_cover, union

    with _progress(quiet) as progress:
        bar = progress.add_task(f"replaying {task.name} candidates", total=None)
        result = minimal_cover(task, max_digits, seed=seed, pool_size=pool,
                               progress=lambda done, total: progress.update(bar, completed=done, total=total))
    p, target = result.pool, union(result.pool.masks)
    return {"task": task.name, "max_digits": max_digits, "seed": seed, "rules": len(task.agent.rules),
            "reachable": len(result.reachable),
            "unreachable": _rule_list(task, set(task.agent.rules) - result.reachable),
            "pool": {"instances": p.drawn, "distinct_rule_sets": len(p.masks), "exhaustive": p.exhaustive},
            "greedy_size": len(result.greedy), "size": len(result.chosen),
            "lower_bound": result.lower_bound, "halting_bound": result.halting_bound,
            "pool_minimum": result.pool_minimum, "proved_minimal": result.lower_bound == len(result.chosen),
            "irredundant": is_irredundant(result.chosen, p.masks, target),
            "published_samples": PUBLISHED_SAMPLES.get(task.name),
            "instances": [[i.a, i.b] for i in result.instances], "seconds": result.seconds}


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True, disable=quiet)


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
    console.print("instances: " + ", ".join(f"{a}+{b}" if "add" in report["task"] else f"{a}x{b}"
                                             for a, b in report["instances"]), highlight=False)
    _rule_table(report["unreachable"], "rules no candidate reaches")


def _rule_table(rules: list[dict], title: str) -> None:
    if not rules:
        return
    table = Table("state", "read", "next", "write", "move", title=title)
    for rule in rules:
        table.add_row(*(rule[k] for k in ("state", "read", "next", "write", "move")))
    console.print(table)
