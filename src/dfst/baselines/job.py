"""`dfst baseline NAME TASK` as one library call: every check before the training, then the run and
its file.

    job = plan_baseline("lstm", "add2", seed=1, config=["steps=200"])  # refuses what cannot run
    outcome = run_baseline_job(job)   # a dfst.results.Result (or a side task's record), saved at job.path

`plan_baseline` resolves the baseline and its task (a dfst task, one of the baseline's own scored
tasks, or a side task that is no dfst task: the NTM's copy), converts the `KEY=VALUE` overrides to
the types of the defaults, and checks the result file before any work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfst.baselines import (
    baseline_defaults,
    baseline_task,
    parse_config,
    run_baseline,
    run_side_task,
    side_task,
)
from dfst.io.outputs import check_output_file
from dfst.protocol.config import check_time_budget
from dfst.results import Result, default_path, save_record, save_result


@dataclass(frozen=True)
class BaselineJob:
    """A checked baseline command: the baseline, the task it is given and the one it is stored under
    (the same but for a side task), its seed and config, and the file its result goes to."""

    name: str
    task_name: str
    stored_task: str
    seed: int
    config: dict
    path: Path
    force: bool
    side: bool  # a side task: a record, not a Result, and no protocol


def plan_baseline(name: str, task_name: str, *, seed: int = 0, config: list[str] | tuple[str, ...] = (),
                  out: str | Path | None = None, force: bool = False) -> BaselineJob:
    """What `dfst baseline` checks before it trains (module docstring); writes nothing."""
    side = side_task(name, task_name) is not None
    stored_task = task_name if side else baseline_task(name, task_name).name
    overrides = parse_config(list(config), baseline_defaults(name, task_name))
    if "eval_seconds" in overrides:  # the ladder's budget, checked now and not after training
        check_time_budget(overrides["eval_seconds"], "eval_seconds")
    # a policy's two sizes are two rows of `dfst table`: the large one gets a file of its own
    stored_name = f"{name}-large" if overrides.get("size") == "large" else name
    path = Path(out) if out is not None else default_path(stored_name, stored_task, seed)
    if path.parent.is_dir():
        check_output_file(path, force=force)  # before the work, not after it
    return BaselineJob(name, task_name, stored_task, seed, overrides, path, force, side)


def run_baseline_job(job: BaselineJob, *, progress: bool = True) -> Result | dict:
    """Train and score the baseline, save its result (a side task's record) at `job.path`, return it."""
    if job.side:
        record = run_side_task(job.name, job.task_name, seed=job.seed, config=job.config, progress=progress)
        save_record(record, job.path, overwrite=job.force)
        return record
    result = run_baseline(job.name, job.task_name, seed=job.seed, config=job.config, progress=progress)
    save_result(result, job.path, overwrite=job.force)
    return result
