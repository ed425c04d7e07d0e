"""`dfst coverage`'s one entry: which of an agent's (state, symbol) rules a set of instances exercises
(a PTO file's, or a sampler's draw), or the smallest set that exercises them all (`minimal`). Every
option and the work it asks for are checked before any instance is drawn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dfst.errors import DfstError
from dfst.tasks.base import Task


@dataclass(frozen=True)
class CoverageQuery:
    """What `dfst coverage` was asked: a --data file, --samples of a --sampler, or --minimal."""

    data: Path | None = None
    samples: int | None = None
    max_digits: int | None = None
    seed: int = 0
    sampler: str = "uniform"
    minimal: bool = False
    pool: int = 5000  # --minimal: random candidates when the pool is not exhaustive
    max_memory: int | None = None  # bytes the replays may plan to hold (None: default_max_memory())

    def check(self) -> None:
        """Which options go together (their values: `dfst.data.samplers.check_coverage_values`)."""
        from dfst.data.samplers import check_coverage_values

        if self.minimal and (self.data is not None or self.samples is not None):
            raise DfstError("--minimal searches its own instances: drop --data and --samples")
        if self.data is not None and (self.samples is not None or self.max_digits is not None):
            raise DfstError("give either --data FILE or --samples N --max-digits L, not both")
        if self.data is None and not self.minimal and self.samples is None:
            raise DfstError("give --data FILE, --samples N --max-digits L, or --minimal --max-digits L")
        if self.data is None and self.max_digits is None:
            raise DfstError("--max-digits L is needed with --samples and --minimal")
        check_coverage_values(self.max_digits, self.samples, self.seed, self.pool, self.sampler)


def coverage(task: Task, query: CoverageQuery, progress: Callable[[int, int], None] | None = None) -> dict:
    """The coverage report (`dfst.data.coverage.coverage_report`, with its `source`), or with
    `minimal` the cover search's (`dfst.data.cover_search.minimal_report`; `progress(done, total)` as
    its candidates are replayed), each with the task's description."""
    from dfst.data.cover_search import minimal_report
    from dfst.data.coverage import coverage_report, file_instances
    from dfst.data.samplers import sampled_instances

    query.check()
    check_work(task, query)
    q = query
    if q.minimal:
        if progress is not None:
            progress(0, None)  # on screen while the candidates are drawn, before the first count
        return minimal_report(task, q.max_digits, q.seed, q.pool, progress=progress) | task.describe()
    if q.data is not None:
        instances, source = file_instances(task, q.data)
    else:
        instances, source = sampled_instances(task, q.samples, q.max_digits, q.seed, q.sampler)
    return coverage_report(task, instances) | {"source": source} | task.describe()


def check_work(task: Task, query: CoverageQuery) -> None:
    """The expert's replays of --samples or --minimal (on the step bound) and the instances they hold,
    against the replay_steps cap and the memory bound, before any instance is drawn (a --data file is
    bounded by the dataset caps)."""
    from dfst.data.cover_search import estimate_minimal
    from dfst.io.limits import default_max_memory
    from dfst.tasks.budget import check_estimate, estimate_coverage

    if query.minimal:
        estimate = estimate_minimal(task, query.max_digits, query.pool)
        what = f"--minimal over a pool of {query.pool:,} candidates of up to {query.max_digits:,} digits"
    elif query.samples is not None:
        estimate = estimate_coverage(task, query.samples, query.max_digits, query.sampler)
        what = f"{query.samples:,} instances of up to {query.max_digits:,} digits (--sampler {query.sampler})"
    else:
        return
    check_estimate(estimate, query.max_memory or default_max_memory(), what)
