"""What the HTML report shows, gathered: the stored results, per task the training runs and the
automaton read off the trained weights, where `runs/` still has them, and the user's own training
runs under the runs directory (`own_runs`).

Results are the one required input, unless the runs directory holds runs of the user's own. Runs are
optional (`runs/` is not committed): whatever is absent or unreadable becomes a line of
`Material.missing`, which the page and the command print, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dfst.automata import Transducer, load_transducer
from dfst.errors import DfstError
from dfst.results import Result, load_results, read_run_result
from dfst.studies.html.own_runs import OwnRun, candidate_dirs, find_own_runs
from dfst.tasks import TASKS

RUN_NAME = re.compile(r"s(\d+)")  # dfst reproduce's run directories: RUNS/<task>/s<seed>
METRICS_FILE = "metrics.jsonl"
EXTRACTED_AGENT = ("extracted", "agent.json")
NO_RUNS_NOTE = " (<task>/s<seed>, as dfst reproduce lays them out)"


@dataclass
class Extracted:
    """The automaton read off one seed's trained DFST (RUNS/<task>/s<seed>/extracted/agent.json)."""

    seed: int
    path: Path
    agent: Transducer


@dataclass
class TaskMaterial:
    """One task's part of the report."""

    name: str
    results: list[Result]
    runs: dict[int, list[dict]] = field(default_factory=dict)  # seed -> metrics.jsonl records
    extracted: Extracted | None = None
    delivered: dict[int, Result] = field(default_factory=dict)  # seed -> the model its run delivers

    @property
    def registered(self) -> bool:
        return self.name in TASKS


@dataclass
class Material:
    """Everything the report shows, and what it could not find."""

    results_dir: Path
    runs_dir: Path
    results: list[Result]
    tasks: list[TaskMaterial]
    missing: list[str] = field(default_factory=list)
    own_runs: list[OwnRun] = field(default_factory=list)  # the user's runs under the runs directory


def collect(results_dir: Path, runs_dir: Path) -> Material:
    """Read every result under `results_dir` and, per task, its runs under `runs_dir` (RUNS/<task>/s<seed>,
    as `dfst reproduce --runs` lays them out), and every other training run under `runs_dir` (the
    user's own). A missing results directory is an error unless there are runs of the user's own."""
    missing: list[str] = []
    results = _stored_results(results_dir, runs_dir, missing)
    material = Material(results_dir, runs_dir, results, [], missing)
    if not runs_dir.is_dir():
        material.missing.append(f"no training runs: {runs_dir} does not exist (dfst train and dfst reproduce "
                                "write them), so there are no training curves and no extracted automata")
    reproduced: set[Path] = set()
    for name in task_order(results):
        task = TaskMaterial(name, [r for r in results if r.task == name])
        if runs_dir.is_dir():
            reproduced |= set(_read_runs(task, runs_dir / name, material.missing).values())
        if not task.registered:
            material.missing.append(f"{name}: not a registered task (no expert to draw or animate)")
        material.tasks.append(task)
    if runs_dir.is_dir() and results and not reproduced:  # one line, not one per task
        material.missing[:] = [n for n in material.missing if not n.endswith(NO_RUNS_NOTE)]
        material.missing.append(f"no dfst reproduce runs (<task>/s<seed>) under {runs_dir}: the stored "
                                "results have no training curves and no extracted automata")
    material.own_runs = find_own_runs(runs_dir, reproduced, material.missing)
    if not results and results_dir.is_dir():
        material.missing.append(f"no stored results under {results_dir}")
    return material


def _stored_results(results_dir: Path, runs_dir: Path, missing: list[str]) -> list[Result]:
    """The results under `results_dir`; none (and a note) where it is missing but `runs_dir` holds
    runs to report, else the error of a missing results directory."""
    if results_dir.is_dir() or not candidate_dirs(runs_dir):
        return load_results(results_dir)
    missing.append(f"no stored results: {results_dir} does not exist (the report shows the runs alone)")
    return []


def task_order(results: list[Result]) -> list[str]:
    """The tasks of `results`: registered ones in the registry's order, then the others by name."""
    present = {r.task for r in results}
    return [t for t in TASKS if t in present] + sorted(present - set(TASKS))


def run_dirs(task_dir: Path) -> dict[int, Path]:
    """seed -> RUNS/<task>/s<seed>, in seed order (other entries are not reproduce's runs)."""
    if not task_dir.is_dir():
        return {}
    found = {int(m.group(1)): p for p in task_dir.iterdir()
             if (m := RUN_NAME.fullmatch(p.name)) and p.is_dir()}
    return dict(sorted(found.items()))


def _read_runs(task: TaskMaterial, task_dir: Path, missing: list[str]) -> dict[int, Path]:
    """The task's training curves, the model each run delivers (where it finished) and its first
    extracted automaton; what fails becomes a note. Returns the runs read (seed -> directory)."""
    from dfst.train.rundir import checked_metrics  # torch: only when there are runs to read

    runs = run_dirs(task_dir)
    if not runs:
        missing.append(f"{task.name}: no training runs under {task_dir}{NO_RUNS_NOTE}")
        return runs
    for seed, run in runs.items():
        try:
            task.runs[seed] = checked_metrics(run)
            if (run / "summary.json").is_file():
                task.delivered[seed] = read_run_result(run)
        except DfstError as exc:
            missing.append(f"{task.name} seed {seed}: training curve left out ({exc})")
    task.extracted = _first_extracted(task.name, runs, missing)
    return runs


def _first_extracted(name: str, runs: dict[int, Path], missing: list[str]) -> Extracted | None:
    """The automaton of the lowest seed whose run has one, on the task's alphabet."""
    for seed, run in runs.items():
        path = run.joinpath(*EXTRACTED_AGENT)
        if not path.is_file():
            continue
        try:
            agent = load_transducer(path)
        except DfstError as exc:
            missing.append(f"{name} seed {seed}: extracted automaton unreadable ({exc})")
            continue
        if name in TASKS and agent.alphabet != TASKS[name].alphabet:
            missing.append(f"{name} seed {seed}: {path} is not on the task's alphabet")
            continue
        return Extracted(seed, path, agent)
    missing.append(f"{name}: no extracted automaton in its runs ({'/'.join(EXTRACTED_AGENT)})")
    return None
