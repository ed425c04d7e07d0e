"""A `dfst train` command as one library call: every check before any work, then the run.

    job = plan_training("add2", "runs/a", options={"seed": 3})   # refuses what cannot run, writes nothing
    summary = run_training(job, progress=print)                   # `train`, or the certify rounds

`plan_training` resolves the task once (its name, or a user's `--agent` file) and passes it down;
it checks the device, the dataset file, the config (the task's recipe, `--published`, the dataset,
the options given), the output directory and the memory the run will take, in that order, so the
first problem is the one reported. The CLI parses, calls these two and prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from dfst.data.pto import PtoDataset
from dfst.errors import DfstError
from dfst.io.limits import default_max_memory
from dfst.tasks.base import Task
from dfst.tasks.own_agent import resolve_task
from dfst.train.budget import check_training
from dfst.train.config import TrainConfig, command_line
from dfst.train.recipes import configure


@dataclass(frozen=True)
class TrainJob:
    """A checked training command: what it trains, where, on what, and what set its config."""

    task: Task
    cfg: TrainConfig
    set_by: dict  # what the recipe, --published, --data and the user's options set (`configure`)
    out: Path
    data: PtoDataset | None  # a dataset file's PTOs, else None: the config's sampler draws them
    data_path: Path | None
    max_memory: int
    device: str = "cpu"
    resume: bool = True
    force: bool = False
    max_rounds: int | None = None  # rounds of train + certify (`--until-certified`); None: one run

    @property
    def command(self) -> str:
        """The command line that reproduces the run."""
        line = command_line(self.cfg, self.out, None if self.max_rounds else self.data_path)
        return line + (" --until-certified" if self.max_rounds else "")


def plan_training(task_name: str, out: str | Path, *, options: dict | None = None,
                  given: set[str] | None = None, data: str | Path | None = None, published: bool = False,
                  resume: bool = True, force: bool = False, max_rounds: int | None = None,
                  device: str = "cpu", max_memory: int | None = None) -> TrainJob:
    """Everything `dfst train` checks before it works (module docstring). `options`: flat TrainConfig
    fields (an `agent` file among them makes that agent the expert); `given`: those the user set
    (None: all). `max_memory`: bytes (default: DFST_MAX_MEMORY, else half the RAM)."""
    from dfst.data import check_dataset, load_dataset
    from dfst.train.loop import training_device
    from dfst.train.rundir import check_out

    training_device(device)  # an unknown or absent device: one line, before anything is read
    options = options or {}
    task = resolve_task(task_name, options.get("agent"))
    if max_rounds is not None and max_rounds < 1:
        raise DfstError(f"--max-rounds must be >= 1, got {max_rounds}")
    dataset = load_dataset(data) if data is not None else None
    if dataset is not None:
        check_dataset(task, dataset, f"dataset {data}")
    cfg, set_by = configure(task.name, options, given, published=published,
                            operands=None if dataset is None else dataset.operands,
                            sampling_rule=None if dataset is None else dataset.sampling.get("rule"))
    out = Path(out)
    if max_rounds is None:
        check_out(out, resume=resume, force=force)
    else:
        from dfst.train.cegis import check_rounds_out

        check_rounds_out(out, force=force)
    memory = default_max_memory() if max_memory is None else max_memory
    check_training(task, cfg if dataset is None else replace(cfg, sampler="uniform"), memory)  # not sampled
    return TrainJob(task, cfg, set_by, out, dataset, None if data is None else Path(data), memory, device,
                    resume, force, max_rounds)


def run_training(job: TrainJob, progress: Callable[[dict], None] | None = None) -> dict:
    """The run's summary (`dfst.train.train`), or with rounds `dfst.train.train_until_certified`'s
    report ({"certified", "samples", "rounds", "model"})."""
    if job.max_rounds is not None:
        from dfst.train.cegis import train_until_certified

        return train_until_certified(job.cfg, job.out, max_rounds=job.max_rounds, data=job.data,
                                     force=job.force, device=job.device, command=job.command,
                                     progress=progress, task=job.task)
    from dfst.train.loop import train

    return train(job.cfg, job.out, data=job.data, resume=not job.force, command=job.command,
                 progress=progress, device=job.device, max_memory=job.max_memory, task=job.task)
