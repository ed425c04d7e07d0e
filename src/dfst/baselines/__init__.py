"""Baselines, trained and scored under the DFST's protocol. Modules are imported only when used.

Each module `dfst.baselines.<module>` defines `DEFAULTS: dict` (its CPU-sized configuration) and
`run(task: Task, *, seed: int, config: dict, progress: bool = True) -> BaselineResult`.
"""

from __future__ import annotations

import importlib

from dfst.errors import DfstError

BASELINES: dict[str, str] = {
    "rpni": "dfst.baselines.rpni",
    "lstm": "dfst.baselines.lstm",
    "neural-gpu": "dfst.baselines.neural_gpu",
    "ntm": "dfst.baselines.ntm",
    "tp-transformer": "dfst.baselines.tp_transformer",
}


def get_baseline(name: str):
    """The module of baseline `name`, or a one-line DfstError listing the known ones."""
    if name not in BASELINES:
        raise DfstError(f"unknown baseline {name!r} (known: {', '.join(BASELINES)})")
    return importlib.import_module(BASELINES[name])
