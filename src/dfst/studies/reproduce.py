"""Train every task over seeds with its recipe, evaluate with the protocol, store and tabulate.

Each (task, seed) is `dfst.studies.seeds.reproduce_seed` (what is trained, scored and stored, and
when a stored result is reused), run as a `dfst.studies.cells.Cell` by an executor; this module
plans the seeds, hands them out, and turns the results into the summary table and README block.
The results directory is locked for the whole run (`dfst.io.run_guard`), each training run by `train`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dfst.errors import DfstError
from dfst.io.inputs import read_text
from dfst.io.limits import check_work
from dfst.io.outputs import refuse_special, replace_between, rewrite_between
from dfst.io.run_guard import run_lock
from dfst.results import Result
from dfst.results.certified import certified_text
from dfst.results.over_seeds import by_group, over_seeds
from dfst.results.training_data import trained_with
from dfst.results.wording import lg_words
from dfst.studies.seeds import DEFAULT_TIME_BUDGET, reproduce_seed
from dfst.train.recipes import RECIPES, TARGET_DIGITS

MARK_START, MARK_END = "<!-- reproduce:start -->", "<!-- reproduce:end -->"
COLUMNS = ("task", "system", "seeds", "samples", "expert runs read", "max train digits", "trained with", "d",
           "params", "robust at target",
           "robust LG (median, min)", "probabilistic LG (median)", "first failing length",
           "certified (all lengths / bounded / none)", "CPU s/seed (median, max)")


def reproduce(plan: dict[str, list[int]], runs: Path, results: Path, *,
              time_budget: float = DEFAULT_TIME_BUDGET, certify: bool = True, rescale: bool = False,
              overrides: dict | None = None,
              on_seed: Callable[[str, int, list[Result]], None] | None = None,
              progress: Callable[[str, dict], None] | None = None,
              rerun: bool = False, accept_stored: bool = False, warn: Callable[[str], None] | None = None,
              command: str = "dfst reproduce", executor: str = "serial", address: str | None = None,
              workers: int | None = None, on_cells: Callable[[int, int, int, int], None] | None = None,
              on_failure: Callable[[str], None] | None = None) -> list[dict]:
    """Every task of `plan` over its seeds; returns the summary rows of `summary_rows`. `progress(label,
    record)`: a seed's training records and evaluation stages (label "add2 seed 3"). With executor
    "ray" the seeds still to train run as Ray tasks (`dfst.studies.executors`; `on_cells` hears done, running,
    failed, total); a seed that fails twice is told to `on_failure` and left out of the rows."""
    found = []
    with run_lock(results, command):  # one writer of these result files at a time
        if executor != "serial":
            for task, seed, got in _seeds_as_cells(plan, runs, results, executor, address, workers, on_cells,
                                                   on_failure, warn, time_budget=time_budget, certify=certify,
                                                   rescale=rescale, overrides=overrides, rerun=rerun,
                                                   accept_stored=accept_stored):
                found += got
                if on_seed is not None:
                    on_seed(task, seed, got)
            return summary_rows(found)
        for task, seeds in plan.items():
            for seed in seeds:
                got = reproduce_seed(task, seed, runs, results, time_budget=time_budget, certify=certify,
                                     rescale=rescale, overrides=overrides, rerun=rerun,
                                     accept_stored=accept_stored, warn=warn,
                                     progress=_labelled(progress, f"{task} seed {seed}"))
                found += got
                if on_seed is not None:
                    on_seed(task, seed, got)
    return summary_rows(found)


def _seeds_as_cells(plan, runs, results, executor, address, workers, on_cells, on_failure, warn, *,
                    time_budget, certify, rescale, overrides, rerun, accept_stored):
    """(task, seed, results) of every seed of `plan` that did not fail, in the plan's order: the stored
    ones read here, the others run by `executor` (each a `dfst.studies.cells.Cell` over the shared runs and
    results directories)."""
    from dfst.studies.cells import Cell, run_all

    options = tuple(sorted((overrides or {}).items()))
    cells = [Cell(task, seed, (), options, time_budget, certify, rescale, runs=str(runs),
                  results=str(results), rerun=rerun, accept_stored=accept_stored)
             for task, seeds in plan.items() for seed in seeds]
    outcomes, _ = run_all(cells, executor=executor, address=address, workers=workers, on_update=on_cells,
                          warn=warn)
    for i, cell in enumerate(cells):
        outcome = outcomes[i]
        if outcome.error is not None:
            if on_failure is not None:
                on_failure(f"{cell.task} seed {cell.seed}: {outcome.error} (tried {outcome.attempts} times)")
            continue
        where = f"{cell.task} seed {cell.seed}"
        yield cell.task, cell.seed, [Result.from_dict(record, where) for record in outcome.value]


def _labelled(progress: Callable[[str, dict], None] | None, label: str) -> Callable[[dict], None] | None:
    return None if progress is None else (lambda record: progress(label, record))


def expert_runs_read(result: Result) -> int | None:
    """Every expert run the result's learner read (`dfst.data.reads`), or the older `queries` count
    (candidates and validation, without the fill-up pairs) where that is all it stored."""
    return (result.details.get("traces") or {}).get("total", result.details.get("queries"))


def _median_known(values: list) -> float | None:
    """The median of the values that are known (None: a run from before they were counted)."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def grown_d(results: list[Result]) -> list[int] | None:
    """[min, max] of the d the fine-tuning phase grew the model to (one dimension per block read off),
    over the seeds where it grew; None where it never did."""
    pairs = [(r.details.get("finetune") or {}).get("d") for r in results]
    grown = [after for pair in pairs if pair for before, after in [pair] if after != before]
    return [min(grown), max(grown)] if grown else None


def summary_rows(results: list[Result]) -> list[dict]:
    """One row per (task, system): successes over seeds, robust / probabilistic LG, CPU per seed."""
    groups = by_group(results, lambda r: (r.task, r.system))
    rows = []
    for (task, system), runs in groups.items():
        target = TARGET_DIGITS[task]
        failing = [r.details["first_failing_digits"] for r in runs if r.details["first_failing_digits"]]
        rows.append({
            "task": task, "system": system, "seeds": len(runs), "samples": runs[0].samples,
            "queries_median": _median_known([expert_runs_read(r) for r in runs]),
            "trained_with": "; ".join(sorted({trained_with(r.config or {}) for r in runs})),
            "max_train_digits": runs[0].max_train_digits, "d": runs[0].details["d"],
            "d_range": [min(r.details["d"] for r in runs), max(r.details["d"] for r in runs)],
            "d_grown": grown_d(runs),
            "params": runs[0].params,
            "params_range": [min(r.params for r in runs), max(r.params for r in runs)],
            **over_seeds(runs, target),
            "first_failing_min": min(failing) if failing else None,
            "cpu_seconds_max": round(max(r.train_seconds for r in runs), 1),
            "failures": [first_failure(r) for r in runs if r.robust_lg < target] if system.startswith("DFST")
            and not system.startswith("DFST (") else [],
        })
    return rows


def first_failure(result: Result) -> dict:
    """Where a seed that is not robust at its target first went wrong: the seed, the first level that
    failed and its first failing instance (hard-set name, operand lengths, verdict), or why testing
    stopped short of the target where no level failed (a time or memory budget)."""
    level = next((lv for lv in result.levels if not lv.get("robust", True)), None)
    failures = (level or {}).get("failures") or [{}]
    where = {"seed": result.seed, "stopped_by": result.details.get("stopped_by"),
             "digits": None if level is None else level["digits"]}
    return where | {key: failures[0].get(key) for key in ("name", "digits_a", "digits_b", "verdict")}


# ----------------------------------------------------------------------------- the command's pieces


@dataclass(frozen=True)
class ReproducePlan:
    """A checked `dfst reproduce`: the seeds of each task, the recipe overrides, and, with an agent
    file, each task with that agent as its expert (resolved: its alphabet and halting checked); where
    runs and results go, how each model is scored, the README block to rewrite, the executor."""

    seeds: dict[str, list[int]]
    overrides: dict
    agent_tasks: list = field(default_factory=list)
    runs: Path = Path("runs/reproduce")
    results: Path = Path("results/dfst")
    time_budget: float = DEFAULT_TIME_BUDGET
    certify: bool = True
    rescale: bool = False
    rerun: bool = False
    accept_stored: bool = False
    readme: Path | None = None
    block: str | None = None
    executor: str = "serial"
    address: str | None = None
    workers: int | None = None
    command: str = "dfst reproduce"


def plan_reproduce(tasks: str, seeds: int = 10, first_seed: int = 0, *, iters: int | None = None,
                   restarts: int | None = None, finetune: bool = True,
                   time_budget: float = DEFAULT_TIME_BUDGET, agent_file: str | Path | None = None,
                   rerun: bool = False, accept_stored: bool = False, readme: Path | None = None,
                   block: str | None = None, executor: str = "serial",
                   say: Callable[[str], None] = lambda text: None, **where) -> ReproducePlan:
    """Everything `dfst reproduce` checks before it trains: the README and its block, the --tasks plan,
    the overrides, the agent on every task of the plan, the two ways with stale results (which
    exclude each other), the executor (Ray missing: serial, told to `say`). `where`: the plan's
    other fields (runs, results, certify, rescale, address, workers, command)."""
    from dfst.studies.executors import choose_executor

    if block is not None and readme is None:
        raise DfstError("--block names a block of the --readme file: give --readme too")
    if readme is not None:
        check_readme(readme, block)
    plan = seed_plan(tasks, seeds, first_seed)
    overrides = check_overrides(iters, restarts, time_budget) | ({} if finetune else {"finetune": False})
    agent_tasks = []
    if agent_file is not None:
        from dfst.tasks.own_agent import resolve_task

        agent_tasks = [resolve_task(task, agent_file) for task in plan]  # before any training
        overrides["agent"] = str(agent_file)
    if rerun and accept_stored:
        raise DfstError("--rerun and --accept-stored exclude each other: pick one")
    return ReproducePlan(plan, overrides, agent_tasks, time_budget=time_budget, rerun=rerun,
                         accept_stored=accept_stored, readme=readme, block=block,
                         executor=choose_executor(executor, say), **where)


def run_reproduce(plan: ReproducePlan, **hear) -> list[dict]:
    """`dfst reproduce` of a checked plan: `reproduce` with the plan's settings, then the plan's README
    block rewritten; `hear`: reproduce's callbacks (on_seed, progress, warn, on_cells, on_failure)."""
    rows = reproduce(plan.seeds, plan.runs, plan.results, time_budget=plan.time_budget, certify=plan.certify,
                     rescale=plan.rescale, overrides=plan.overrides, rerun=plan.rerun,
                     accept_stored=plan.accept_stored, command=plan.command, executor=plan.executor,
                     address=plan.address, workers=plan.workers, **hear)
    if plan.readme is not None:
        write_readme(plan.readme, rows, plan.block)
    return rows


def seed_plan(tasks: str, seeds: int, first_seed: int) -> dict[str, list[int]]:
    """`--tasks add2,mult10:1,add10:3-5` with --seeds 10 -> {"add2": seeds 0-9, "mult10": seed 0,
    "add10": seeds 3-5} (counts from first_seed; A-B is the seeds A to B)."""
    if seeds < 1 or first_seed < 0:
        raise DfstError(f"need --seeds >= 1 and --first-seed >= 0, got {seeds} and {first_seed}")
    plan, unknown = {}, []
    for item in filter(None, (t.strip() for t in tasks.split(","))):
        name, _, count = item.partition(":")
        if name not in RECIPES:
            unknown.append(name)
        else:
            plan[name] = _seeds_of(item, count, seeds, first_seed)
    if not plan or unknown:
        given = ", ".join(unknown) or "(none given)"
        raise DfstError(f"unknown task(s) {given} (known: {', '.join(RECIPES)}; dfst reproduce takes the "
                        "built-in tasks, not those of a --tasks-file: train yours with dfst train)")
    check_work("cells", sum(map(len, plan.values())), f"--tasks {tasks} with --seeds {seeds:,}")
    return {task: list(seeds) for task, seeds in plan.items()}  # built once counted


def _seeds_of(item: str, count: str, seeds: int, first_seed: int) -> range:
    """The seeds of one --tasks item: TASK (--seeds from --first-seed), TASK:N or TASK:A-B."""
    low, dash, high = count.partition("-")
    if dash and low.isdigit() and high.isdigit() and int(low) <= int(high):
        return range(int(low), int(high) + 1)
    if count and (dash or not count.isdigit() or int(count) < 1):
        raise DfstError(f"bad seeds in --tasks {item!r}: want TASK:N with N >= 1, or TASK:A-B with A <= B")
    return range(first_seed, first_seed + (int(count) if count else seeds))


def check_overrides(iters: int | None, restarts: int | None, time_budget: float) -> dict:
    """The recipe overrides given, checked before any work: counts >= 1, a finite positive budget."""
    for option, value in (("--iters", iters), ("--restarts", restarts)):
        if value is not None and value < 1:
            raise DfstError(f"{option} must be >= 1, got {value}")
    if not (math.isfinite(time_budget) and time_budget > 0):
        raise DfstError(f"--time-budget must be a positive number of seconds, got {time_budget}")
    return {k: v for k, v in (("iters", iters), ("restarts", restarts)) if v is not None}


def seed_line(task: str, seed: int, results: list[Result]) -> str:
    """What `dfst reproduce` prints after each seed."""
    return (f"{task} seed {seed}: " + ", ".join(f"{r.system} {lg_words(r.robust_lg, r.levels)}{_verdict(r)}"
                                                for r in results) + f" ({results[0].train_seconds} CPU s)")


def _verdict(result: Result) -> str:
    cert = result.details.get("certified")
    if cert is None:
        return ""
    bound = "" if cert["max_digits"] is None or cert["verdict"] != "CERTIFIED" else \
        f" to {cert['max_digits']:,} digits"
    return f" ({cert['verdict']}{bound})"


def display(row: dict) -> dict:
    """A summary row for people (COLUMNS)."""
    failing = row["first_failing_min"]
    queries = row.get("queries_median")
    return {"task": row["task"], "system": row["system"], "seeds": row["seeds"], "samples": row["samples"],
            "expert runs read": "-" if queries is None else f"{queries:,.0f}",
            "max train digits": row["max_train_digits"],
            "trained with": row.get("trained_with", "-"), "d": _d_text(row), "params": _params_text(row),
            "robust at target": f"{row['successes']}/{row['seeds']} at {row['target_digits']:,}",
            "robust LG (median, min)": f"{row['robust_lg_median']:,.0f}, {row['robust_lg_min']:,}",
            "probabilistic LG (median)": f"{row['probabilistic_lg_median']:,.0f}",
            "first failing length": "none" if failing is None else f"{failing:,}",
            "certified (all lengths / bounded / none)": certified_text(row["certified"]),
            "CPU s/seed (median, max)": f"{row['cpu_seconds_median']}, {row['cpu_seconds_max']}"}


def _params_text(row: dict) -> str:
    """The weights at the d training ended with, over the seeds: `258` or `4,634-8,568`."""
    low, high = row.get("params_range") or (row["params"], row["params"])
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def _d_text(row: dict) -> str:
    """`19`, `6-9` over the seeds, or `19 (grown to 20-22)` where fine-tuning added dimensions."""
    low, high = row.get("d_range") or (row["d"], row["d"])
    trained = str(low) if low == high else f"{low}-{high}"
    grown = row.get("d_grown")
    if not grown:
        return trained
    return f"{trained} (grown to {grown[0] if grown[0] == grown[1] else f'{grown[0]}-{grown[1]}'})"


def markdown(rows: list[dict]) -> str:
    """The summary rows as the Markdown table of README's reproduce block, then every DFST seed not
    robust at its target with its first failing instance."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(display(r)[c]) for c in COLUMNS) + " |" for r in rows]
    failures = [f"- {r['task']} seed {f['seed']} ({r['system']}): {failure_text(f)}"
                for r in rows for f in r.get("failures", [])]
    if failures:
        count = "One seed" if len(failures) == 1 else f"{len(failures)} seeds"
        lines += ["", f"{count} not robust at the target, each with its first failing instance:", ""]
        lines += failures
    return "\n".join(lines) + "\n"


def failure_text(failure: dict) -> str:
    """'fails at 10 digits on alternating_by_1 (10 x 1 digits): non_finite', or why testing stopped."""
    if failure["digits"] is None:
        return f"testing stopped before the target ({failure['stopped_by']})"
    shape = f" ({failure['digits_a']} x {failure['digits_b']} digits)" if failure.get("digits_a") else ""
    return f"fails at {failure['digits']:,} digits on {failure['name']}{shape}: {failure['verdict']}"


def block_marks(block: str | None) -> tuple[str, str]:
    """The marks around a reproduce block: the README's, or `<!-- reproduce:NAME:start -->` for a
    named one (a second table in the same file, such as the fresh seeds')."""
    if block is None:
        return MARK_START, MARK_END
    if not block.replace("_", "").replace("-", "").isalnum():
        raise DfstError(f"--block {block!r}: want letters, digits, - or _")
    return f"<!-- reproduce:{block}:start -->", f"<!-- reproduce:{block}:end -->"


def check_readme(path: Path, block: str | None = None) -> None:
    """Refuse, before any training, a --readme that `write_readme` could not rewrite: not a regular
    file (a link, a FIFO, missing) or without the block's marks."""
    refuse_special(path, "file to rewrite")
    replace_between(read_text(path, "file to rewrite", "text_bytes"), *block_marks(block), "", str(path))


def write_readme(path: Path, rows: list[dict], block: str | None = None) -> None:
    """Rewrite the reproduce block (or the block named `block`) of the file at `path` with the rows."""
    rewrite_between(path, *block_marks(block), markdown(rows))
