"""Baselines, trained and scored under the DFST's protocol. Modules are imported only when used.

Each module `dfst.baselines.<module>` defines `DEFAULTS: dict` (its CPU-sized configuration) and
`run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result` (`dfst.results.Result`).
A module may add tasks of
its own: `EXTRA_TASKS` (scored like a dfst task, e.g. the TP-Transformer's mult10x1) and `SIDE_TASKS`
(name -> (run, defaults): no dfst task and no protocol, e.g. the NTM's copy; their record is a dict).

    from dfst.baselines import run_baseline
    result = run_baseline("rpni", "add2", seed=0)          # a dfst.results.Result
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from dfst.errors import DfstError

BASELINES: dict[str, str] = {
    "rpni": "dfst.baselines.rpni",
    "edsm": "dfst.baselines.edsm",
    "lstm": "dfst.baselines.lstm",
    "neural-gpu": "dfst.baselines.neural_gpu",
    "ntm": "dfst.baselines.ntm",
    "library-model": "dfst.baselines.library_model",
    "tp-transformer": "dfst.baselines.tp_transformer",
    "lstm-policy": "dfst.baselines.lstm_policy",
    "gru-policy": "dfst.baselines.gru_policy",
    "transformer-policy": "dfst.baselines.transformer_policy",
}


def get_baseline(name: str) -> ModuleType:
    """The module of baseline `name`; an unknown name, or one whose module is not in this build, is a
    one-line DfstError."""
    if name not in BASELINES:
        raise DfstError(f"unknown baseline {name!r} (known: {', '.join(BASELINES)})")
    try:
        module = importlib.import_module(BASELINES[name])
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("dfst.baselines"):
            raise
        module = None
    if not hasattr(module, "run") or not hasattr(module, "DEFAULTS"):
        raise DfstError(f"baseline {name!r} is not available in this build")
    return module


def side_task(name: str, task: str) -> tuple[Callable[..., dict], dict] | None:
    """(run, defaults) if `task` is one of baseline `name`'s side tasks (no dfst task), else None."""
    return getattr(get_baseline(name), "SIDE_TASKS", {}).get(task)


def baseline_defaults(name: str, task: str) -> dict:
    """The configuration that `--config KEY=VALUE` overrides for baseline `name` on `task`."""
    side = side_task(name, task)
    return side[1] if side is not None else get_baseline(name).DEFAULTS


def baseline_task(name: str, task: str):
    """The Task that baseline `name` is scored on: one of its EXTRA_TASKS or a dfst task."""
    from dfst.tasks import get_task

    return getattr(get_baseline(name), "EXTRA_TASKS", {}).get(task) or get_task(task)


def run_baseline(name: str, task: str, *, seed: int = 0, config: dict | None = None,
                 progress: bool = True):
    """Train baseline `name` on `task` (a dfst task or one of the baseline's EXTRA_TASKS) and score
    it with the DFST's protocol; returns its `dfst.results.Result`. `config` overrides DEFAULTS."""
    if side_task(name, task) is not None:
        raise DfstError(f"{task} is {name}'s own task, not scored as a result: use run_side_task")
    module = get_baseline(name)
    return module.run(baseline_task(name, task), seed=seed, config=config or {}, progress=progress)


def run_side_task(name: str, task: str, *, seed: int = 0, config: dict | None = None,
                  progress: bool = True) -> dict:
    """Run one of baseline `name`'s side tasks (e.g. the NTM's copy); returns its record."""
    side = side_task(name, task)
    if side is None:
        raise DfstError(f"baseline {name!r} has no side task {task!r}")
    return side[0](seed, config or {}, progress=progress)


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
