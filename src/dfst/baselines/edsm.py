"""EDSM: AALpy's evidence-driven state merging on the DFST's own PTOs, searched and scored exactly as
the RPNI baseline is (`dfst.baselines.rpni`; only the learner differs)."""

from __future__ import annotations

from dfst.baselines import rpni
from dfst.results import Result
from dfst.tasks.base import Task

DEFAULTS: dict = {**rpni.DEFAULTS, "learner": "edsm"}


def run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    return rpni.run(task, seed=seed, config={**DEFAULTS, **config}, progress=progress)
