"""Result files: where they go, writing them, and reading results back from result files, checkpoints
(eval.json) and training runs (summary.json).

`dfst baseline` writes `results/baselines/<name>-<task>-s<seed>.json`, `dfst reproduce` writes
`results/dfst/<task>[-extracted]-s<seed>.json`; `load_results` reads every result under a directory.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

from dfst import __version__
from dfst.errors import DfstError
from dfst.io import records
from dfst.io.inputs import read_json, read_json_file
from dfst.io.outputs import check_output_file, json_bytes, make_directory, write_atomic, write_json
from dfst.results.schema import Result, is_result, result_version

RESULTS_DIR = Path("results")
CELL_FILE = "cell.json"  # in a sweep cell's results directory (dfst.studies.cells): what the cell is


def default_path(name: str, task: str, seed: int, root: Path = RESULTS_DIR) -> Path:
    """Where `dfst baseline NAME TASK --seed SEED` stores its result."""
    return root / "baselines" / f"{name}-{task}-s{seed}.json"


def result_bytes(result: Result) -> bytes:
    """The file content of a result: its JSON, stamped with this dfst's version."""
    return json_bytes(replace(result, dfst_version=__version__).to_dict())


def save_result(result: Result, path: Path, *, overwrite: bool = False) -> None:
    """Write the result JSON atomically; refuses to replace a file unless told to (and then only
    dfst's own)."""
    _prepare(path, overwrite)
    write_atomic(path, result_bytes(result))


def save_record(record: dict, path: Path, *, overwrite: bool = False) -> None:
    """Write a record that is no Result (a baseline's own task, such as the NTM's copy) as JSON,
    atomically, never over a file unless told to."""
    _prepare(path, overwrite)
    write_json(path, {"dfst_version": __version__} | record)


def _prepare(path: Path, overwrite: bool) -> None:
    make_directory(path.parent, "results directory")
    check_output_file(path, force=overwrite)


def load_result(path: Path) -> Result:
    """The result stored in the file at `path`, checked."""
    return Result.from_dict(read_json_file(path, f"cannot read {path}"), str(path))


def load_results(root: Path, *, sweeps: bool = False) -> list[Result]:
    """Every result under `root` (recursively), in path order, each with every figure a table
    needs. JSON that is no result (`schema.is_result`) is skipped, and so, unless `sweeps`, is every
    result of a sweep's cell (`sweep_cells`): a sweep's settings and seeds never slip into a table
    of the headline runs."""
    if not root.is_dir():
        raise DfstError(f"results directory {root} does not exist")
    found = []
    for path in sorted(root.rglob("*.json")):
        if not sweeps and _in_sweep_cell(path, root):
            continue
        data = read_json(path, "result file")  # a regular file, size and depth caps, no NaN
        if is_result(data):
            result = Result.from_dict(data, str(path))
            if missing := result.missing_figures():
                raise DfstError(f"{path}: field {missing[0]!r} is null; a stored result needs every figure")
            found.append(result)
    return found


def migrate_results(root: Path) -> list[Path]:
    """Rewrite, once, every result under `root` from before the format marker (version 0) as the
    current version: the same fields and values, with `format` and `version` first (docs/results.md,
    "Versions"). All are checked before any is written: a file with a field outside the result's is
    refused, as migrating would drop it. Results already marked and JSON that is no result are left
    alone. Returns the files rewritten."""
    if not root.is_dir():
        raise DfstError(f"results directory {root} does not exist")
    found = []
    for path in sorted(root.rglob("*.json")):
        data = read_json(path, "result file")
        if is_result(data) and result_version(data, str(path)) == 0:
            found.append((path, _migrated(data, str(path))))
            check_output_file(path, force=True)  # a regular file of dfst's, claimed until replaced
    for path, data in found:
        write_atomic(path, json_bytes(data))
    return [path for path, _ in found]


def _migrated(data: dict, where: str) -> dict:
    """The current version's JSON of a version-0 result, or a DfstError where a value would be lost."""
    if extra := sorted(set(data) - {f.name for f in fields(Result)}):
        raise DfstError(f"{where}: field {extra[0]!r} is no result field, so migrating would drop it; "
                        "nothing was rewritten (move the file away or remove the field)")
    migrated = Result.from_dict(data, where).to_dict()
    if any(migrated[key] != value for key, value in data.items()):
        raise DfstError(f"{where}: a field would change in migration; nothing was rewritten")
    return migrated


def sweep_cells(root: Path) -> list[Path]:
    """The sweep cells' directories below `root` whose results `load_results` leaves out unless
    asked: every cell not directly in `root` (pointed at a sweep's own directory, its cells count)."""
    return sorted(p.parent for p in root.rglob(CELL_FILE) if _in_sweep_cell(p, root) and p.is_file())


def _in_sweep_cell(path: Path, root: Path) -> bool:
    """Is `path` inside a sweep cell (a directory holding cell.json) that lies deeper than one level
    below `root`? A cell directly in `root` means the user pointed at that sweep's results."""
    parts = path.relative_to(root).parts[:-1]  # the directories between root and path
    return any((root.joinpath(*parts[:i]) / CELL_FILE).is_file() for i in range(2, len(parts) + 1))


def read_checkpoint_result(path: Path) -> Result:
    """The result of an evaluated checkpoint directory: its eval.json and config.json."""
    report = records.eval_report(read_json_file(
        path / "eval.json", f"{path}/eval.json is missing (run dfst eval {path} first)"), f"{path}/eval.json")
    config = records.require(read_json_file(
        path / "config.json", f"{path}/config.json is missing (not a checkpoint)"), {}, f"{path}/config.json")
    return Result.from_eval_report(report, config, name=f"{path.parent.name}/{path.name}").checked(
        f"{path}/config.json")


def read_run_result(run: Path) -> Result:
    """The result of a training run directory: its summary.json, and the LG of the model the run
    delivers (RUN/model, what `dfst eval RUN` scores) from RUN/model/eval.json where `dfst eval RUN`
    measured it, else from the run's own check at its --eval-digits."""
    from dfst.io.recorded import check_recorded_files

    check_recorded_files(run)  # never a row of a run whose files changed
    path = run / "summary.json"
    summary = records.summary(read_json_file(
        path, f"{run} has no summary.json (not a finished dfst train run)"), str(path))
    result = Result.from_run_summary(summary, name=run.name)
    evaluated = run / "model" / "eval.json"
    if evaluated.is_file():
        result = result.with_model_eval(records.eval_report(read_json_file(
            evaluated, f"cannot read {evaluated}"), str(evaluated)))
    return result.checked(str(path))
