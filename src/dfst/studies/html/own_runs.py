"""The user's own training runs under the report's runs directory: every `dfst train` run directory
there (the directory itself included) that is not one of `dfst reproduce`'s RUNS/<task>/s<seed>.

Each run found is shown (its row as `dfst report-runs` prints it, its training curve and the model it
delivers) or left out with one line saying why (not finished, unreadable, not a training run).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dfst.errors import DfstError
from dfst.results import Result, read_run_result

# A directory holding one of these is a run, or looks like one: it is shown or said to be left out.
RUN_FILES = ("config.json", "summary.json", "metrics.jsonl")
MAX_DEPTH = 4  # directories below the runs directory searched for runs
MAX_RUNS = 200  # runs read at most; more are named in one line


@dataclass
class OwnRun:
    """One of the user's runs: where it is, its result (`read_run_result`: the model it delivers) and
    its metrics.jsonl records (empty where they could not be read)."""

    path: Path
    label: str
    result: Result
    records: list[dict]


def find_own_runs(runs_dir: Path, reproduce_dirs: set[Path], missing: list[str]) -> list[OwnRun]:
    """The runs under `runs_dir` outside `reproduce_dirs`, in path order; each one left out adds a
    line to `missing` saying why."""
    found = [p for p in candidate_dirs(runs_dir) if p not in reproduce_dirs]
    if len(found) > MAX_RUNS:
        missing.append(f"{len(found) - MAX_RUNS:,} more run directories under {runs_dir} left out (the "
                       f"report reads {MAX_RUNS} at most; give --runs a smaller directory)")
        found = found[:MAX_RUNS]
    runs = []
    for path in found:
        label = _label(path, runs_dir)
        try:
            runs.append(_read_run(path, label, missing))
        except DfstError as exc:
            missing.append(f"run {label}: left out ({exc})")
    return runs


def candidate_dirs(root: Path) -> list[Path]:
    """The directories under `root` (itself included, at most MAX_DEPTH below, links not followed)
    that hold a run's files; a run's own subdirectories (model/, trained/, ...) are not searched."""
    if not root.is_dir():
        return []
    found = []
    for top, dirs, files in os.walk(root):
        here = Path(top)
        depth = len(here.relative_to(root).parts)
        if any(name in files for name in RUN_FILES):
            found.append(here)
            dirs.clear()  # a run's checkpoints hold a config.json too: not runs of their own
        elif depth >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
    return sorted(found)


def _read_run(path: Path, label: str, missing: list[str]) -> OwnRun:
    """The run at `path`, or a DfstError saying why it is left out."""
    from dfst.io.targets import SUMMARY_FILE, is_run
    from dfst.train.rundir import checked_metrics

    if not is_run(path):
        raise DfstError("not a dfst train run: no config.json of one (a checkpoint is reported by dfst "
                        "report CHECKPOINT)")
    if not (path / SUMMARY_FILE).is_file():
        raise DfstError(f"not finished (no {SUMMARY_FILE}): the same dfst train command resumes it")
    result = read_run_result(path)
    try:
        records = checked_metrics(path)
    except DfstError as exc:
        missing.append(f"run {label}: training curve left out ({exc})")
        records = []
    result.details["run"] = label  # the row names the run as the report found it
    return OwnRun(path, label, result, records)


def _label(path: Path, root: Path) -> str:
    """The run's path below the runs directory (its own name where it is the runs directory)."""
    relative = path.relative_to(root)
    return str(relative) if relative.parts else path.name
