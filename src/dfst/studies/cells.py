"""Cells: one task and seed under one set of recipe options, trained and evaluated as `dfst reproduce`
does a seed (`dfst.studies.seeds.reproduce_seed`). `dfst sweep` and `dfst reproduce --executor ray` hand
cells to `dfst.studies.executors.run_cells`; `run_cell` is what a worker runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dfst.studies.executors import Outcome, Update, run_cells
from dfst.studies.seeds import reproduce_seed, settled_seed


@dataclass(frozen=True)
class Cell:
    """One task and seed under one point of the grid (plus the fixed options)."""

    task: str
    seed: int
    point: tuple[tuple[str, Any], ...]    # the grid's options for this cell, in the file's order
    options: tuple[tuple[str, Any], ...]  # fixed and grid options together, sorted
    time_budget: float
    certify: bool
    rescale: bool
    runs: str = ""      # RUNS/<id>, set by `plan_cells`
    results: str = ""   # RESULTS/<id>
    rerun: bool = False
    accept_stored: bool = False

    @property
    def id(self) -> str:
        """The hash of everything that determines the cell's results (16 hex digits)."""
        body = {"task": self.task, "seed": self.seed, "options": [list(o) for o in self.options],
                "time_budget": self.time_budget, "certify": self.certify, "rescale": self.rescale}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> dict:
        return {"id": self.id, "task": self.task, "seed": self.seed, "point": dict(self.point),
                "options": dict(self.options), "time_budget": self.time_budget, "certify": self.certify,
                "rescale": self.rescale}

    def reproduce_args(self) -> dict:
        return {"time_budget": self.time_budget, "certify": self.certify, "rescale": self.rescale,
                "overrides": dict(self.options)}


def run_cell(cell: Cell) -> list[dict]:
    """Train and evaluate one cell (`dfst.studies.seeds.reproduce_seed`); returns its results as JSON.
    Top-level, so that Ray can send it to a worker."""
    found = reproduce_seed(cell.task, cell.seed, Path(cell.runs), Path(cell.results), rerun=cell.rerun,
                           accept_stored=cell.accept_stored, **cell.reproduce_args())
    return [r.to_dict() for r in found]


def settled_cells(cells: list[Cell], warn: Callable[[str], None] | None = None) -> dict[int, Outcome]:
    """The cells whose results are stored under their key (or accepted as stored), by index: nothing
    to run. A cell stored under another key, without rerun or accept_stored, is refused here, before
    any work."""
    settled = {}
    for i, cell in enumerate(cells):
        stored = settled_seed(cell.task, cell.seed, Path(cell.results), rerun=cell.rerun,
                              accept_stored=cell.accept_stored, warn=warn, **cell.reproduce_args())
        if stored is not None:
            settled[i] = Outcome([r.to_dict() for r in stored], None, 0)
    return settled


def run_all(cells: list[Cell], *, executor: str, address: str | None = None, workers: int | None = None,
            on_update: Update | None = None, warn: Callable[[str], None] | None = None,
            before_run: Callable[[Cell], None] | None = None) -> tuple[list[Outcome], int]:
    """Every cell's outcome, in order, and how many were settled without running (`settled_cells`);
    the rest run on `executor` (`dfst.studies.executors.run_cells`), `before_run` told of each first.
    `on_update` counts the settled cells as done."""
    outcomes = settled_cells(cells, warn)
    todo = [i for i in range(len(cells)) if i not in outcomes]
    skipped = len(outcomes)
    for i in todo:
        if before_run is not None:
            before_run(cells[i])

    def update(done: int, running: int, failed: int, total: int) -> None:
        if on_update is not None:
            on_update(done + skipped, running, failed, len(cells))

    ran = run_cells(run_cell, [cells[i] for i in todo], executor=executor, address=address, workers=workers,
                    on_update=update)
    outcomes.update(zip(todo, ran))
    return [outcomes[i] for i in range(len(cells))], skipped
