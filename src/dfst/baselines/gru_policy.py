"""`dfst baseline gru-policy TASK`: a GRU trained on the DFST's own PTOs, run closed loop on the
grid and scored by the DFST's protocol (`dfst.baselines.policy`)."""

from __future__ import annotations

from dfst.baselines.policy import KIND_DEFAULTS, run_kind
from dfst.results import Result
from dfst.tasks.base import Task

DEFAULTS: dict = dict(KIND_DEFAULTS["gru"])


def run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    return run_kind("gru", task, seed=seed, config=config, progress=progress)
