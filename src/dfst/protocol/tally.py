"""One length's verdicts: the hard set's and the random pairs', kept apart, as answers come in.

The two kinds of evidence say different things. The hard set is a fixed list of structured cases
(carry chains, leading zeros, ...): any failure there is a proof of a fault, but passing it says
nothing about the cases it lacks. The random pairs estimate the failure rate on uniform operands: a
95% Wilson interval on the exact rate, and, when none fails, a one-sided 95% upper bound on the
failure rate, 1 - 0.05^(1/R) (about 3/R). Neither suffices alone: a model wrong only on carries into
a new leading digit passes every random pair, and one wrong on a few random pairs in 10,000 can pass
every hard instance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dfst.tasks.base import Instance

SHOWN_CHARS = 10_000  # longer operands and answers are shortened in a result (the set has them whole)
# A level lists this many failing hard instances, the first by name; the rest are counted in
# `failures_unlisted`. A model wrong everywhere fails every carry family (hundreds of instances a length);
# listing each in every level made one result hundreds of KB.
LISTED_FAILURES = 50


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion."""
    if trials == 0:
        return 0.0, 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    # The bounds are exact at the edges; rounding must not leave the observed rate outside.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def pairs_to_catch(rate: float = 0.001, confidence: float = 0.95) -> int:
    """Random pairs that catch, with probability `confidence`, a model wrong on `rate` of them."""
    return math.ceil(math.log(1 - confidence) / math.log(1 - rate))


DEFAULT_RANDOM = pairs_to_catch()  # 2,995: a model wrong on 0.1% of uniform pairs is caught 95% of the time


def failure_rate_bound(failures: int, trials: int, confidence: float = 0.95) -> float | None:
    """The one-sided upper bound on the failure rate when no trial failed (exact binomial), else None."""
    if failures or not trials:
        return None
    return 1 - (1 - confidence) ** (1 / trials)


def shorten(text: str | None) -> str | None:
    """The text itself, or its two ends when it is over SHOWN_CHARS."""
    if text is None or len(text) <= SHOWN_CHARS:
        return text
    half = SHOWN_CHARS // 2
    return f"{text[:half]}...{text[-half:]}"


@dataclass
class Level:
    """One length of the protocol, the one record every evaluator writes (dfst's engine, `dfst score`,
    the baselines): the hard set's and the random pairs' counts kept apart, the failing hard
    instances (name, lengths, verdict; the first LISTED_FAILURES by name, the rest counted; a random
    pair's failure is counted, not listed) and the first failure with its operands (the one with the
    smallest id: answers may come in any order)."""

    digits: int
    hard: int = 0
    hard_exact: int = 0
    random: int = 0
    random_exact: int = 0
    failures: list[dict] = field(default_factory=list)
    first_failure: dict | None = None
    steps: int | None = None  # grid steps run: known on dfst's engine, None for an external answerer
    excluded: int = 0  # protocol instances left out or drawn again: the model was trained on them

    def add(self, request_id: int, instance: Instance, expected: str, answer: str | None) -> None:
        """An answer, judged by comparison with the expected one."""
        exact = answer == expected
        verdict = "exact" if exact else "no_answer" if answer is None else "wrong_answer"
        self.count(request_id, instance, exact, verdict, lambda: (expected, answer))

    def count(self, request_id: int, instance: Instance, exact: bool, verdict: str,
              answers: Callable[[], tuple[str, str | None]]) -> None:
        """A verdict; `answers()` (the expected and the given answer) is read only for a failure."""
        if instance.name == "random":
            self.random += 1
            self.random_exact += exact
        else:
            self.hard += 1
            self.hard_exact += exact
            if not exact:
                self.failures.append({"name": instance.name, "digits_a": len(instance.a),
                                      "digits_b": len(instance.b), "verdict": verdict})
        if not exact and (self.first_failure is None or request_id < self.first_failure["id"]):
            self.first_failure = failure_record(request_id, instance, *answers())

    @property
    def robust(self) -> bool:
        return self.hard_exact + self.random_exact == self.hard + self.random

    @property
    def probabilistic(self) -> bool:
        """All random pairs exact; with no random pairs there is nothing to claim."""
        return self.random > 0 and self.random_exact == self.random

    def record(self, seconds: float) -> dict:
        """The level as every report holds it: the counts, the verdicts and the failures."""
        low, high = wilson_interval(self.random_exact, self.random)
        failures = sorted(self.failures, key=lambda f: (f["name"], f["digits_a"], f["digits_b"]))
        record = {
            "digits": self.digits, "instances": self.hard + self.random,
            "exact": self.hard_exact + self.random_exact, "robust": self.robust,
            "hard": self.hard, "hard_exact": self.hard_exact, "hard_pass": self.hard_exact == self.hard,
            "random": self.random, "random_exact": self.random_exact, "probabilistic": self.probabilistic,
            "wilson_low": low, "wilson_high": high,
            "failure_rate_bound": failure_rate_bound(self.random - self.random_exact, self.random),
            "failures": failures[:LISTED_FAILURES],
            "first_failure": self.first_failure, "steps": self.steps, "seconds": round(seconds, 3),
            "excluded": self.excluded,
        }
        if len(failures) > LISTED_FAILURES:  # only then: a record that lists every failure is unchanged
            record["failures_unlisted"] = len(failures) - LISTED_FAILURES
        return record


def failure_record(request_id: int, instance: Instance, expected: str, answer: str | None) -> dict:
    """A failing instance: where it is in the set, its operands, and the expected and given answers."""
    return {"id": request_id, "name": instance.name, "a": shorten(instance.a), "b": shorten(instance.b),
            "digits_a": len(instance.a), "digits_b": len(instance.b),
            "expected": shorten(expected), "answer": shorten(answer)}
