"""`dfst sweep`: a grid of recipe options x tasks x seeds from a small TOML file, each cell trained and
evaluated as `dfst reproduce` does one seed, on the serial executor or on Ray (`dfst.studies.executors`).

The file (docs/scaling.md; examples/sweeps/):

    tasks = ["add2"]            # tasks with a recipe (dfst.train.recipes)
    seeds = 3                   # seeds 0..2, or a list: [0, 5, 7]
    time_budget = 60            # evaluation seconds per model (default: reproduce's)
    certify = false             # give every model to dfst certify (default: true)
    [fixed]                     # TrainConfig fields every cell sets (dfst train's options, with _)
    iters = 500
    [grid]                      # the fields varied: every combination is a cell, for each task and seed
    noise = [0.0, 0.03]

A cell is identified by a hash of its configuration (task, seed, options, the evaluation settings):
its results land in RESULTS/<hash>/ (the files `dfst reproduce` writes, and cell.json saying what
the cell is), its run in RUNS/<hash>/. A cell whose results are stored under the same key is
skipped, so a killed sweep resumes where it was; a failed cell is retried once and reported, never
the end of the sweep. Results do not depend on the executor: each cell's training is seeded and
single-threaded, so the serial and the Ray executor give the same weights.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dfst import __version__
from dfst.errors import DfstError
from dfst.io.inputs import read_text
from dfst.io.limits import check_work, default_max_memory
from dfst.io.outputs import check_output_file, make_directory, write_json
from dfst.io.run_guard import run_lock
from dfst.results import Result
from dfst.results.certified import certified_text
from dfst.results.over_seeds import by_group, over_seeds
from dfst.results.store import CELL_FILE
from dfst.studies.cells import Cell, run_all
from dfst.studies.executors import Outcome, Update
from dfst.studies.seeds import DEFAULT_TIME_BUDGET, run_config
from dfst.tasks import get_task
from dfst.train.budget import check_training
from dfst.train.recipes import RECIPES, TARGET_DIGITS

KEYS = ("tasks", "seeds", "time_budget", "certify", "rescale", "fixed", "grid")
SET_BY_THE_SWEEP = ("task", "seed")  # the cell's own: from `tasks` and `seeds`
COLUMNS = ("task", "options", "system", "seeds", "robust at target", "robust LG (median, min)",
           "probabilistic LG (median)", "certified (all lengths / bounded / none)", "CPU s/seed (median)")


@dataclass
class SweepSpec:
    """A sweep file, checked."""

    tasks: list[str]
    seeds: list[int]
    fixed: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list] = field(default_factory=dict)
    time_budget: float = DEFAULT_TIME_BUDGET
    certify: bool = True
    rescale: bool = False


def plan_sweep(spec_file: str | Path, runs: str | Path | None = None, results: str | Path | None = None,
               *, rerun: bool = False) -> tuple[list[Cell], Path]:
    """What `dfst sweep FILE` checks before it runs anything: the spec, and every cell's options (by
    building its config); returns the cells and the results directory (default
    results/sweeps/NAME, the runs under runs/sweeps/NAME, NAME the file's stem)."""
    spec_file = Path(spec_file)
    spec, name = load_spec(spec_file), spec_file.stem
    results = Path(results) if results is not None else Path("results") / "sweeps" / name
    runs = Path(runs) if runs is not None else Path("runs") / "sweeps" / name
    return plan_cells(spec, runs, results, where=str(spec_file), rerun=rerun), results


def load_spec(path: Path) -> SweepSpec:
    """The sweep in TOML file `path`; a DfstError naming the file and the problem otherwise."""
    try:
        data = tomllib.loads(read_text(path, "sweep file", "text_bytes"))
    except tomllib.TOMLDecodeError as exc:
        raise DfstError(f"{path}: not valid TOML ({exc})") from None
    return check_spec(data, str(path))


def check_spec(data: dict, where: str) -> SweepSpec:
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise DfstError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    tasks = data.get("tasks")
    if not (isinstance(tasks, list) and tasks and all(isinstance(t, str) for t in tasks)):
        raise DfstError(f"{where}: 'tasks' must be a non-empty list of task names")
    if missing := [t for t in tasks if t not in RECIPES]:
        raise DfstError(f"{where}: task {missing[0]!r} has no recipe (known: {', '.join(RECIPES)})")
    fixed, grid = _table(data, "fixed", where), _table(data, "grid", where)
    for name, values in grid.items():
        if not (isinstance(values, list) and values):
            raise DfstError(f"{where}: grid option {name!r} must be a non-empty list of values")
    if both := sorted(set(fixed) & set(grid)):
        raise DfstError(f"{where}: option {both[0]!r} is both fixed and in the grid")
    if own := sorted(set(SET_BY_THE_SWEEP) & (set(fixed) | set(grid))):
        raise DfstError(f"{where}: {own[0]!r} is set by the sweep's 'tasks' and 'seeds', not by an option")
    budget = data.get("time_budget", DEFAULT_TIME_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not (
            math.isfinite(budget) and budget > 0):
        raise DfstError(f"{where}: 'time_budget' must be a positive number of seconds, got {budget!r}")
    flags = {name: data.get(name, default) for name, default in (("certify", True), ("rescale", False))}
    if bad := [name for name, value in flags.items() if not isinstance(value, bool)]:
        raise DfstError(f"{where}: {bad[0]!r} must be true or false")
    seeds = _seeds(data.get("seeds", 1), where)
    points = math.prod(len(values) for values in grid.values())
    check_work("cells", len(tasks) * points * len(seeds),  # before a seed list or a cell is built
               f"{where}: {len(tasks)} x {points:,} x {len(seeds):,} (tasks x grid points x seeds)")
    return SweepSpec(tasks=list(tasks), seeds=list(seeds), fixed=fixed, grid=grid,
                     time_budget=float(budget), **flags)


def _table(data: dict, name: str, where: str) -> dict:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise DfstError(f"{where}: [{name}] must be a table of options")
    return dict(value)


def _seeds(value: Any, where: str) -> range | list[int]:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return range(value)
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                 for s in value) and len(set(value)) == len(value):
        return list(value)
    raise DfstError(f"{where}: 'seeds' must be a count >= 1 or a list of distinct seeds >= 0, got {value!r}")


def plan_cells(spec: SweepSpec, runs: Path, results: Path, *, where: str, rerun: bool = False,
               accept_stored: bool = False) -> list[Cell]:
    """Every cell of the sweep, task by task, grid point by point, seed by seed; each cell's options
    checked by building its training config (a bad option is refused before any work)."""
    names = list(spec.grid)
    cells = []
    for task in spec.tasks:
        for values in itertools.product(*(spec.grid[n] for n in names)):
            point = tuple(zip(names, values))
            options = tuple(sorted({**spec.fixed, **dict(point)}.items()))
            for seed in spec.seeds:
                cell = Cell(task, seed, point, options, spec.time_budget, spec.certify, spec.rescale,
                            rerun=rerun, accept_stored=accept_stored)
                _check_options(cell, where)
                cells.append(replace(cell, runs=str(runs / cell.id), results=str(results / cell.id)))
    return cells


def _check_options(cell: Cell, where: str) -> None:
    """The cell's training config built, and its memory estimated (`dfst.train.budget.check_training`)."""
    try:
        check_training(get_task(cell.task), run_config(cell.task, cell.seed, dict(cell.options)),
                       default_max_memory())
    except (TypeError, ValueError, DfstError) as exc:
        raise DfstError(f"{where}: {cell.task} with {_point_text(cell.options)}: {exc}") from None


def run_sweep(cells: list[Cell], results: Path, *, executor: str = "serial", address: str | None = None,
              workers: int | None = None, on_update: Update | None = None,
              command: str = "dfst sweep") -> tuple[list[Outcome], int]:
    """Run the cells not already stored; returns every cell's outcome (stored ones included) and how
    many were skipped. One sweep writes into `results` at a time."""
    make_directory(results)
    with run_lock(results, command):
        return run_all(cells, executor=executor, address=address, workers=workers, on_update=on_update,
                       before_run=write_cell_file)


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: its cells, how many were stored already, the failed ones (a line each), the
    executor that ran them, where the results are, and the rows of `sweep_rows`."""

    cells: int
    skipped: int
    failed: list[str]
    executor: str
    results: Path
    rows: list[dict]

    def to_dict(self) -> dict:
        return {"cells": self.cells, "skipped": self.skipped, "failed": self.failed,
                "executor": self.executor, "results": str(self.results), "rows": self.rows}


def sweep(spec_file: str | Path, runs: str | Path | None = None, results: str | Path | None = None, *,
          rerun: bool = False, executor: str = "serial", address: str | None = None,
          workers: int | None = None, say: Callable[[str], None] = lambda text: None,
          on_update: Update | None = None, command: str = "dfst sweep") -> SweepReport:
    """`dfst sweep`: the spec's cells planned and checked (`plan_sweep`), the executor chosen (Ray
    missing: serial, told to `say`), the cells not stored yet run (`run_sweep`), the rows made."""
    from dfst.studies.executors import choose_executor

    cells, results = plan_sweep(spec_file, runs, results, rerun=rerun)
    executor = choose_executor(executor, say)
    outcomes, skipped = run_sweep(cells, results, executor=executor, address=address, workers=workers,
                                  on_update=on_update, command=command)
    return SweepReport(len(cells), skipped, failures(cells, outcomes), executor, results,
                       sweep_rows(cells, outcomes))


def write_cell_file(cell: Cell) -> None:
    """RESULTS/<id>/cell.json: what the cell is, for a person browsing the results. A file of the user's
    there, or a link, is refused before any cell runs (it carries dfst_version, so dfst's own is
    replaced)."""
    make_directory(Path(cell.results))
    path = check_output_file(Path(cell.results) / CELL_FILE, force=True)
    record = cell.describe() | {"dfst_version": __version__}
    write_json(path, record, indent=2)


def sweep_rows(cells: list[Cell], outcomes: list[Outcome]) -> list[dict]:
    """One row per (task, grid point, system) over the seeds that finished; a cell that failed
    counts in `failed` and adds no figures."""
    failed = Counter((cell.task, cell.point) for cell, outcome in zip(cells, outcomes)
                     if outcome.error is not None)
    found = [(cell, Result.from_dict(record, f"cell {cell.id}"))
             for cell, outcome in zip(cells, outcomes) for record in outcome.value or []]
    groups = by_group(found, lambda pair: (pair[0].task, pair[0].point, pair[1].system))
    return [{"task": task, "options": dict(point), "system": system, "seeds": len(pairs),
             "failed": failed[(task, point)], **over_seeds([r for _, r in pairs], TARGET_DIGITS[task])}
            for (task, point, system), pairs in groups.items()]


def display(row: dict) -> dict:
    """A row of `sweep_rows` for people (COLUMNS)."""
    seeds = f"{row['seeds']}" + (f" ({row['failed']} failed)" if row["failed"] else "")
    return {"task": row["task"], "options": _point_text(tuple(row["options"].items())) or "(recipe)",
            "system": row["system"], "seeds": seeds,
            "robust at target": f"{row['successes']}/{row['seeds']} at {row['target_digits']:,}",
            "robust LG (median, min)": f"{_num(row['robust_lg_median'])}, {row['robust_lg_min']:,}",
            "probabilistic LG (median)": _num(row["probabilistic_lg_median"]),
            "certified (all lengths / bounded / none)": certified_text(row["certified"]),
            "CPU s/seed (median)": row["cpu_seconds_median"]}


def failures(cells: list[Cell], outcomes: list[Outcome]) -> list[str]:
    """One line per failed cell: what it was and its error."""
    return [f"{c.task} seed {c.seed} {_point_text(c.point) or '(recipe)'} [{c.id}]: {o.error} "
            f"(tried {o.attempts} times)" for c, o in zip(cells, outcomes) if o.error is not None]


def _point_text(point: tuple[tuple[str, Any], ...]) -> str:
    return " ".join(f"{name}={value}" for name, value in point)


def _num(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
