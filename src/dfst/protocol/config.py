"""The protocol's one config: which lengths, which instances, when the ladder stops.

Every evaluation of dfst takes it: `dfst eval` and training's evaluations of a DFST, `dfst score` of a
model that is not dfst's, and the baselines. Only the defaults of the commands differ (`dfst eval`:
10 random pairs a length, the paper's protocol; `dfst score`: 2,995, `dfst.protocol.tally.DEFAULT_RANDOM`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from dfst.errors import DfstError

UNTIL_FAIL_BUDGET = 600.0  # seconds: the time budget of --until-fail when none is given


def check_time_budget(seconds: float, name: str = "the time budget") -> None:
    """A time budget is a finite positive number of seconds; anything else is a one-line DfstError
    naming it (`name`: how the caller's user set it)."""
    if not (math.isfinite(seconds) and seconds > 0):
        raise DfstError(f"{name} must be a positive number of seconds, got {seconds}")


@dataclass(frozen=True)
class EvalConfig:
    """At each length of `digits`: the task's hard set (`hard`) and `random` pairs drawn from
    `default_rng(seed + N)`. `until_fail` climbs from the largest length by `ladder_factor` up to
    `max_digits` and stops at the first length that is not robust. `time_budget` (seconds; with
    `until_fail`, UNTIL_FAIL_BUDGET when None) stops before a length predicted to overrun it;
    `max_memory` (bytes; None: `dfst.io.limits.default_max_memory()`) bounds what one length may
    plan to hold. `rescale` rescales a DFST's h by max|h| every step (other models ignore it)."""

    digits: tuple[int, ...] = (10, 100, 1000)
    random: int = 10
    hard: bool = True
    seed: int = 0
    rescale: bool = False
    until_fail: bool = False
    ladder_factor: float = 2.0
    max_digits: int = 10**7
    time_budget: float | None = None
    max_memory: int | None = None

    def __post_init__(self) -> None:
        if self.random < 0:
            raise DfstError(f"random pairs must be >= 0, got {self.random}")
        if self.seed < 0:
            raise DfstError(f"the seed must be >= 0, got {self.seed}")
        if self.random == 0 and not self.hard:
            raise DfstError("nothing to evaluate: no random pairs and no hard instances")
        if not self.digits or min(self.digits) < 1:
            raise DfstError(f"lengths must be >= 1, got {list(self.digits)}")
        if self.time_budget is not None:
            check_time_budget(self.time_budget)
        if self.max_memory is not None and self.max_memory < 1:
            raise DfstError(f"the memory bound must be at least 1 byte, got {self.max_memory}")

    @property
    def budget(self) -> float | None:
        """The time budget in force: the given one, else UNTIL_FAIL_BUDGET when climbing, else none."""
        if self.time_budget is not None:
            return self.time_budget
        return UNTIL_FAIL_BUDGET if self.until_fail else None

    def to_dict(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in asdict(self).items()}
