"""Training PTO sets: the samplers that choose which instances the expert is recorded on.

"contexts" (the default) looks at the PTOs alone: instances whose PTOs show the most pairs of
consecutive observations not yet shown, then random pairs (`dfst.data.contexts`). Two read the
expert's hidden states, and are labelled so: "cover" picks instances that exercise every rule of
the expert first (`dfst.data.coverage`), then random pairs; "pairs" also every pair of consecutive
rules the candidates show. "uniform" is the rule of `dfst.data.record_dataset`. All are seeded.
`check_dataset` checks a given set as `dfst coverage` does before anything trains on it.
"""

from __future__ import annotations

from collections.abc import Callable

from dfst.data.contexts import context_cover_dataset
from dfst.data.pto import PtoDataset, dataset_of, record_dataset, record_run
from dfst.errors import DfstError
from dfst.tasks import Instance, Task


def record_instances(task: Task, instances: list[Instance], seed: int, sampling: dict) -> PtoDataset:
    """The expert's PTOs on the given instances, as a dataset (`sampling` says how they were chosen)."""
    return dataset_of(task, instances, [record_run(task, inst) for inst in instances], seed, sampling)


def cover_dataset(task: Task, samples: int, max_digits: int, seed: int) -> PtoDataset:
    """A rule cover first, then random pairs (`dfst.data.coverage.cover_instances`), recorded."""
    return _cover_sampled(task, samples, max_digits, seed, "cover")


def pair_cover_dataset(task: Task, samples: int, max_digits: int, seed: int) -> PtoDataset:
    """A cover of the rules and of the pairs of consecutive rules first, then random pairs."""
    return _cover_sampled(task, samples, max_digits, seed, "pairs")


def _cover_sampled(task: Task, samples: int, max_digits: int, seed: int, rule: str) -> PtoDataset:
    """A cover sampler's dataset; `queries` counts the candidates whose runs it read (`dfst.data.reads`)."""
    from dfst.data.coverage import counted_cover, rule_pairs_used, rules_used

    units = rule_pairs_used if rule == "pairs" else rules_used
    instances, runs, covering = counted_cover(task, samples, max_digits, seed, units=units)
    sampling = {"rule": rule, "min_digits": 1, "max_digits": max_digits, "queries": runs,
                "covering": covering}
    return record_instances(task, instances, seed, sampling)


def check_dataset(task: Task, dataset: PtoDataset, source: str) -> None:
    """A dataset to train `task` on, checked as `dfst coverage` checks it: the task's, its operands the
    task's, each PTO the expert's own run; a one-line DfstError naming `source` and the first bad sample."""
    from dfst.data.coverage import dataset_instances

    if dataset.task != task.name:
        raise DfstError(f"{source} is for task {dataset.task}, not {task.name}")
    for i, (a, b) in enumerate(dataset.operands):
        try:
            task.check(a, b)
        except DfstError as exc:
            raise DfstError(f"{source}: sample {i} ({a!r}, {b!r}): {exc}") from None
    dataset_instances(task, dataset, source)


# (task, samples, max_digits, seed) -> dataset
SAMPLERS: dict[str, Callable[[Task, int, int, int], PtoDataset]] = {
    "contexts": context_cover_dataset,
    "cover": cover_dataset,
    "pairs": pair_cover_dataset,
    "uniform": record_dataset,
}


def check_coverage_values(max_digits: int | None, samples: int | None, seed: int, pool: int,
                          sampler: str) -> None:
    """The values `dfst coverage` takes, all checked before any work (named as its options)."""
    if max_digits is not None and max_digits < 1:
        raise DfstError(f"--max-digits must be at least 1, got {max_digits}")
    if samples is not None and samples < 1:
        raise DfstError(f"--samples must be at least 1, got {samples}")
    if seed < 0 or pool < 0:
        raise DfstError(f"--seed and --pool must be non-negative, got {seed} and {pool}")
    if sampler not in SAMPLERS:
        raise DfstError(f"unknown --sampler {sampler!r} (known: {', '.join(SAMPLERS)})")


def sampled_instances(task: Task, samples: int, max_digits: int, seed: int,
                      sampler: str = "uniform") -> tuple[list[Instance], dict]:
    """The instances a training sampler (`SAMPLERS`) draws, and how they were drawn."""
    ds = SAMPLERS[sampler](task, samples, max_digits, seed)
    source = {"sampler": sampler, "samples": samples, "max_digits": max_digits, "seed": seed}
    return [Instance(a, b) for a, b in ds.operands], source
