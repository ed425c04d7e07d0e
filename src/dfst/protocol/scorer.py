"""`score`: any model that maps operand pairs to answers, under dfst's length-generalisation protocol.

The lengths, their instances (hard set, then seeded random pairs), the verdicts and the ladder of
`--until-fail` are `dfst eval`'s (`dfst.protocol.evaluate`); only the model differs: here it is a function,
a command speaking JSON Lines (`CommandModel`) or a file of answers (`AnswersFile`), each an
*answerer*: it takes a stream of requests and yields each with its answer, in any order. The result
is the versioned `dfst.results.Result`, with the instance set's hash in `details`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field

from dfst import __version__
from dfst.errors import DfstError
from dfst.io.limits import default_max_memory
from dfst.protocol.evaluate import EvalConfig, ladder
from dfst.protocol.instances import InstanceSet, Request, random_stream
from dfst.protocol.tally import DEFAULT_RANDOM, LevelTally
from dfst.results import Result
from dfst.tasks import Task, get_task
from dfst.tasks.budget import hard_digits
from dfst.tasks.hard import hard_set_version

# Maps operand pairs (digit strings, most significant first; b is "" for a one-operand task) to answers.
Predict = Callable[[list[tuple[str, str]]], Sequence[str | None]]
Answerer = Callable[[Iterator[Request]], Iterable[tuple[Request, str | None]]]
Progress = Callable[[int, int, int], None]  # (digits, answers so far, instances of the length)
AfterLevel = Callable[[list[dict]], bool]  # (the levels so far) -> stop the ladder here?
BATCH_BYTES = 32 << 20  # request bytes handed to `predict` at once (a batch of 10^5-digit pairs: ~160)


@dataclass(frozen=True)
class ScoreConfig:
    """Which instances: lengths, random pairs per length, seed; `until_fail` climbs x2 from the
    largest length to `max_digits`; `budget` (seconds) stops before a length predicted to overrun it."""

    digits: tuple[int, ...] = (10, 100, 1000)
    random: int = DEFAULT_RANDOM
    seed: int = 0
    hard: bool = True
    until_fail: bool = False
    budget: float | None = None
    max_digits: int = 10**6
    ladder: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise DfstError(f"the seed must be >= 0, got {self.seed}")
        if self.budget is not None and not self.budget > 0:
            raise DfstError(f"the time budget must be a positive number of seconds, got {self.budget}")
        protocol = EvalConfig(tuple(self.digits), self.random, self.hard, self.seed,
                              until_fail=self.until_fail, max_digits=self.max_digits)  # checks the rest
        object.__setattr__(self, "ladder", tuple(ladder(protocol)))

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if k != "ladder"}


def score(predict: Predict, task: Task | str, digits: Sequence[int] = (10, 100, 1000),
          random: int = DEFAULT_RANDOM, seed: int = 0, *, hard: bool = True, until_fail: bool = False,
          budget: float | None = None, max_digits: int = 10**6, batch: int = 1024,
          system: str = "external", on_progress: Progress | None = None,
          after_level: AfterLevel | None = None) -> Result:
    """Score `predict` (operand pairs -> answer strings, None for no answer) on `task` (a Task or a
    registered name) under the protocol; `predict` gets at most `batch` pairs at a time.
    `after_level(levels so far)` is called after each length; True stops there (dfst's baselines
    stop after a length with no exact answer, and save what they have as they go)."""
    task = get_task(task) if isinstance(task, str) else task
    cfg = ScoreConfig(tuple(digits), random, seed, hard, until_fail, budget, max_digits)
    if batch < 1:
        raise DfstError(f"batch must be >= 1, got {batch}")
    return score_with(batched(predict, batch), task, cfg, system=system, on_progress=on_progress,
                      after_level=after_level)


def batched(predict: Predict, batch: int) -> Answerer:
    """An answerer calling `predict` on batches of at most `batch` pairs and BATCH_BYTES."""
    def answer(requests: Iterator[Request]) -> Iterator[tuple[Request, str | None]]:
        chunk: list[Request] = []
        size = 0
        for request in requests:
            chunk.append(request)
            size += len(request.line)
            if len(chunk) >= batch or size >= BATCH_BYTES:
                yield from _predict_chunk(predict, chunk)
                chunk, size = [], 0
        if chunk:
            yield from _predict_chunk(predict, chunk)
    return answer


def _predict_chunk(predict: Predict, chunk: list[Request]) -> Iterator[tuple[Request, str | None]]:
    answers = list(predict([(r.instance.a, r.instance.b) for r in chunk]))
    if len(answers) != len(chunk):
        raise DfstError(f"predict returned {len(answers)} answers for {len(chunk)} pairs")
    for request, answer in zip(chunk, answers):
        if answer is not None and not isinstance(answer, str):
            pair = f"({_short(request.instance.a)}, {_short(request.instance.b)})"
            raise DfstError(f"predict's answer to {pair} is {answer!r} ({type(answer).__name__}), "
                            "not a string of digits")
        yield request, answer


def _short(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:20] + "...")


def score_with(answer: Answerer, task: Task, cfg: ScoreConfig, *, system: str, config: dict | None = None,
               on_progress: Progress | None = None, after_level: AfterLevel | None = None) -> Result:
    """Every length of the ladder through `answer`, or up to the one after which `after_level` says
    stop; the Result with the set's hash and dfst's own time."""
    check_memory(task, max(cfg.digits))
    instance_set, levels = InstanceSet(), []
    wall, cpu = time.perf_counter(), time.process_time()
    stopped_by = "max_digits" if cfg.until_fail else "completed"
    for n in cfg.ladder:
        reason = _reason_to_stop(task, n, cfg, levels, time.perf_counter() - wall)
        if reason is not None:
            stopped_by = reason
            break
        levels.append(score_level(answer, task, n, cfg, instance_set, on_progress))
        if cfg.until_fail and not levels[-1]["robust"]:
            stopped_by = "failure"
            break
        if after_level is not None and after_level(list(levels)):
            stopped_by = "after_level"
            break
    details = {"instances_sha256": instance_set.sha256, "instance_count": instance_set.count,
               "hard_set": hard_set_version(task.name), "stopped_by": stopped_by,
               "seconds": round(time.perf_counter() - wall, 3),
               "dfst_cpu_seconds": round(time.process_time() - cpu, 3)} | task.describe()
    return Result(system=system, task=task.name, seed=cfg.seed, samples=None, params=None,
                  max_train_digits=None, robust_lg=max_passing(levels, "robust"),
                  probabilistic_lg=max_passing(levels, "probabilistic"), train_seconds=None, hardware=None,
                  levels=levels, config=cfg.to_dict() | (config or {}),
                  notes=f"dfst score: {instance_set.count:,} instances, sha256 {instance_set.sha256[:16]}",
                  details=details, dfst_version=__version__)


def _reason_to_stop(task: Task, n: int, cfg: ScoreConfig, levels: list[dict], elapsed: float) -> str | None:
    """"memory" for a rung of the climb whose hard set would not fit, "time_budget" for a length whose
    predicted time (from the last one, grown as the task's step bound, as `dfst eval`)
    overruns the budget; None to go on."""
    if n > max(cfg.digits) and not fits_memory(task, n):
        return "memory"
    if cfg.budget is not None and levels:
        last = levels[-1]
        if elapsed + last["seconds"] * task.time_growth(n, last["digits"]) > cfg.budget:
            return "time_budget"
    return None


def score_level(answer: Answerer, task: Task, n: int, cfg: ScoreConfig, instance_set: InstanceSet,
                on_progress: Progress | None = None) -> dict:
    """One length: its requests through `answer`, each answer checked against the task's."""
    start, tally = time.perf_counter(), LevelTally(n)
    hard = task.hard_instances(n) if cfg.hard else []
    total = len(hard) + cfg.random
    requests = instance_set.number(_chain(hard, random_stream(task, n, cfg.random, cfg.seed)))
    done = 0
    for request, given in answer(requests):
        tally.add(request.id, request.instance, task.expected(request.instance), given)
        done += 1
        if on_progress is not None and (done % 64 == 0 or done == total):
            on_progress(n, done, total)
    if done != total:
        raise DfstError(f"the model answered {done} of the {total} instances of length {n:,}")
    return tally.report(time.perf_counter() - start)


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest


def max_passing(levels: list[dict], key: str) -> int:
    """The largest length with every length up to it passing `key` ("robust" or "probabilistic")."""
    best = 0
    for level in levels:
        if not level[key]:
            break
        best = level["digits"]
    return best


def fits_memory(task: Task, n: int) -> bool:
    """Does the hard set of n digits (held whole: the task makes it as a list) fit the memory bound?"""
    return 4 * hard_digits(task, n)[1] <= default_max_memory()


def check_memory(task: Task, n: int) -> None:
    if not fits_memory(task, n):
        raise DfstError(f"--digits {n:,}: the hard set of {task.name} at that length would not fit in memory "
                        "(DFST_MAX_MEMORY)")
