"""`dfst baseline` (train and score one baseline, store its result) and `dfst table` (the comparison)."""

from __future__ import annotations

from pathlib import Path

import typer

from dfst.cli.app import JsonOption, app, console, print_json, show_rows
from dfst.errors import DfstError


@app.command("baseline")
def baseline_command(
    name: str = typer.Argument(..., metavar="NAME", help="rpni, lstm, neural-gpu, ntm or tp-transformer."),
    task_name: str = typer.Argument(..., metavar="TASK", help="A dfst task, or a baseline's own: ntm copy, "
                                    "tp-transformer mult10x1."),
    seed: int = typer.Option(0, "--seed", help="Seed of the data, the initialisation and the training."),
    config: list[str] = typer.Option([], "--config", help="KEY=VALUE overriding the baseline's defaults "
                                     "(repeatable; the value takes the default's type)."),
    out: Path = typer.Option(None, "--out",
                             help="Result file (default results/baselines/NAME-TASK-sSEED.json)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing result file."),
    as_json: bool = JsonOption,
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress output."),
) -> None:
    """Train a baseline on TASK, score it with the DFST's protocol and store its result JSON."""
    from dfst.baselines import get_baseline
    from dfst.baselines.results import default_path, save_result
    from dfst.outputs import check_output_file
    from dfst.tasks import get_task

    module = _module(name, get_baseline)
    side = getattr(module, "SIDE_TASKS", {}).get(task_name)  # e.g. the NTM's own copy task
    if side is not None:
        return _run_side_task(name, task_name, side, seed, config, out, force, as_json, no_progress)
    task = getattr(module, "EXTRA_TASKS", {}).get(task_name) or get_task(task_name)  # e.g. mult10x1
    overrides = parse_config(config, module.DEFAULTS)
    path = out or default_path(name, task.name, seed)
    if path.parent.is_dir():
        check_output_file(path, force=force)  # before the work, not after it
    result = module.run(task, seed=seed, config=overrides, progress=not no_progress)
    save_result(result, path, overwrite=force)
    if as_json:
        return print_json(result.to_json() | {"path": str(path)})
    console.print(f"{result.system} on {result.task} (seed {seed}): {result.samples:,} samples, "
                  f"{result.params:,} params, trained <= {result.max_train_digits} digits in "
                  f"{result.train_seconds:.1f} s; robust LG {result.robust_lg:,}, probabilistic LG "
                  f"{result.probabilistic_lg:,} -> {path}")


def _run_side_task(name: str, task_name: str, side, seed: int, config: list[str], out: Path | None,
                   force: bool, as_json: bool, no_progress: bool) -> None:
    """A baseline's own task (no dfst task, no protocol): its run's dict is stored as it is."""
    from dfst.baselines.results import default_path, save_record
    from dfst.outputs import check_output_file

    run, defaults = side
    overrides = parse_config(config, defaults)
    path = out or default_path(name, task_name, seed)
    if path.parent.is_dir():
        check_output_file(path, force=force)  # before the work, not after it
    record = run(seed, overrides, progress=not no_progress)
    save_record(record, path, overwrite=force)
    if as_json:
        return print_json(record | {"path": str(path)})
    exact = ", ".join(f"{n}: {e}/{record['test_count']}" for n, e in record["exact"].items())
    console.print(f"{name} on {task_name} (seed {seed}): trained on lengths <= {record['max_train_length']} "
                  f"in {record['train_seconds']:.1f} s; exact copies by length {exact} -> {path}")


def _module(name: str, get_baseline):
    """The baseline's module; unknown names and modules not written yet are one-line errors."""
    try:
        module = get_baseline(name)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("dfst.baselines"):
            raise
        module = None
    if not hasattr(module, "run") or not hasattr(module, "DEFAULTS"):
        raise DfstError(f"baseline {name!r} is not available in this build")
    return module


def parse_config(items: list[str], defaults: dict) -> dict:
    """KEY=VALUE strings, each value converted to the type of the default it overrides."""
    parsed = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep:
            raise DfstError(f"--config {item!r} is not KEY=VALUE")
        if key not in defaults:
            raise DfstError(f"unknown config key {key!r} (known: {', '.join(defaults)})")
        parsed[key] = _convert(key, text, defaults[key])
    return parsed


def _convert(key: str, text: str, default: object) -> object:
    if isinstance(default, bool):
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise DfstError(f"--config {key}={text!r}: expected true or false")
        return text.lower() in ("true", "1", "yes")
    try:
        return type(default)(text.replace("_", "") if isinstance(default, int | float) else text)
    except ValueError:
        raise DfstError(f"--config {key}={text!r}: expected {type(default).__name__}") from None


@app.command("table")
def table_command(
    results: Path = typer.Option(Path("results"), "--results", help="Directory of result JSON files."),
    readme: Path = typer.Option(None, "--readme", help="Rewrite the comparison block of this README."),
    as_json: bool = JsonOption,
) -> None:
    """The comparison table: one row per system and task, aggregated over seeds."""
    from dfst.baselines.results import DISPLAY_COLUMNS, display_rows, load_results, table_rows, write_readme

    rows = table_rows(load_results(results))
    if readme is not None:
        write_readme(readme, rows, f"Regenerate: `dfst table --readme {readme.name}` (rows from "
                     f"`{results}/`). LG: best (median) over seeds; other numbers are medians.")
    if as_json:
        return print_json(rows)
    show_rows(display_rows(rows), DISPLAY_COLUMNS, "comparison (dfst table; LG: best (median) over seeds)",
              markdown=False, as_json=False)
