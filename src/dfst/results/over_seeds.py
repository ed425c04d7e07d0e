"""Results grouped into table rows (`by_group`), and one system's figures over seeds
against a target length, as `dfst reproduce` and `dfst sweep` show them: how many seeds were robust at
the target, the robust and probabilistic LG, the certification and the CPU seconds. (`dfst table`
reads any result, with no target: `dfst.results.tables`.)"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from dfst.results.certified import certified_counts
from dfst.results.schema import Result

T = TypeVar("T")


def by_group(items: Iterable[T], key: Callable[[T], Hashable]) -> dict[Hashable, list[T]]:
    """`items` grouped by `key`, a table row each ((system, task) for `dfst table`, (task, system)
    for reproduce); groups and the seeds within them in the order they come."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def over_seeds(runs: Sequence[Result], target: int) -> dict:
    """{"target_digits", "successes", "robust_lg_median", "robust_lg_min", "probabilistic_lg_median",
    "certified", "cpu_seconds_median"} of the seeds' results."""
    return {"target_digits": target,
            "successes": sum(r.robust_lg >= target for r in runs),
            "robust_lg_median": statistics.median(r.robust_lg for r in runs),
            "robust_lg_min": min(r.robust_lg for r in runs),
            "probabilistic_lg_median": statistics.median(r.probabilistic_lg for r in runs),
            "certified": certified_counts(runs),
            "cpu_seconds_median": round(statistics.median(r.train_seconds for r in runs), 1)}
