"""`score`: any model that maps operand pairs to answers, under dfst's length-generalisation protocol.

The config, the lengths, their instances (hard set, then seeded random pairs), the verdicts and the
ladder loop are `dfst eval`'s (`dfst.protocol.config`, `.instances`, `.ladder`); only the model
differs: here it is a function,
a command speaking JSON Lines (`CommandModel`) or a file of answers (`AnswersFile`), each an
*answerer*: it takes a stream of requests and yields each with its answer, in any order. The result
is the versioned `dfst.results.Result`, with the instance set's hash in `details`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from dfst import __version__
from dfst.errors import DfstError
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import HeldOut, InstanceSet, Request, is_first, random_stream
from dfst.protocol.ladder import climb, max_passing
from dfst.protocol.tally import DEFAULT_RANDOM, Level
from dfst.results import Result
from dfst.tasks import Task, get_task
from dfst.tasks.budget import estimate_hard_set
from dfst.tasks.hard import hard_set_version

# Maps operand pairs (digit strings, most significant first; b is "" for a one-operand task) to answers.
Predict = Callable[[list[tuple[str, str]]], Sequence[str | None]]
Answerer = Callable[[Iterator[Request]], Iterable[tuple[Request, str | None]]]
Progress = Callable[[int, int, int], None]  # (digits, answers so far, instances of the length)
AfterLevel = Callable[[list[dict]], bool]  # (the levels so far) -> stop the ladder here?
BATCH_BYTES = 32 << 20  # request bytes handed to `predict` at once (a batch of 10^5-digit pairs: ~160)


def score(predict: Predict, task: Task | str, digits: Sequence[int] = (10, 100, 1000),
          random: int = DEFAULT_RANDOM, seed: int = 0, *, hard: bool = True, until_fail: bool = False,
          budget: float | None = None, max_digits: int = 10**6, batch: int = 1024,
          system: str = "external", on_progress: Progress | None = None,
          after_level: AfterLevel | None = None) -> Result:
    """Score `predict` (operand pairs -> answer strings, None for no answer) on `task` (a Task or a
    registered name) under the protocol; `predict` gets at most `batch` pairs at a time.
    `after_level(levels so far)` is called after each length; True stops there (dfst's baselines
    stop after a length with no exact answer, and save what they have as they go). A length that
    ends in an error (a bad answer from `predict`) raises ScoringStopped, whose `result` keeps the
    lengths scored before it."""
    task = get_task(task) if isinstance(task, str) else task
    cfg = EvalConfig(tuple(digits), random, hard, seed, until_fail=until_fail, max_digits=max_digits,
                     time_budget=budget)
    if batch < 1:
        raise DfstError(f"batch must be >= 1, got {batch}")
    result = score_with(batched(predict, batch), task, cfg, system=system, on_progress=on_progress,
                        after_level=after_level)
    if "error" in result.details:
        raise ScoringStopped(result)
    return result


class ScoringStopped(DfstError):
    """A length ended in an error; `result` holds the lengths scored before it."""

    def __init__(self, result: Result):
        super().__init__(result.details["error"])
        self.result = result


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


def score_with(answer: Answerer, task: Task, cfg: EvalConfig, *, system: str, config: dict | None = None,
               on_progress: Progress | None = None, after_level: AfterLevel | None = None,
               held_out: HeldOut | None = None, **stops) -> Result:
    """Every length of the ladder through `answer`, or up to the one after which `after_level` says
    stop; the Result with the set's hash and dfst's own time. `stops`: `climb`'s `growth` and
    `before`, for a model whose time grows otherwise than the task's steps or that cannot run a
    length, and `clock` (default the wall's: a command answers in its own process). `held_out`: the
    operand pairs the model was trained on, never scored (each level counts them as `excluded`).
    Memory: the hard set of a length is held whole (the task makes it as a list), the random pairs
    stream."""
    instance_set = InstanceSet()
    wall, cpu = time.perf_counter(), time.process_time()

    def after(levels: list[dict]) -> str | None:
        return "after_level" if after_level is not None and after_level(list(levels)) else None

    held_out = held_out or HeldOut()

    def run_level(n: int) -> dict:
        return score_level(answer, task, n, cfg, instance_set, on_progress, held_out)

    estimate = lambda n: estimate_hard_set(task, n, cfg.hard)  # noqa: E731
    levels, stopped_by, error = climb(task, cfg, run_level, estimate, after=after, **stops)
    details = {"instances_sha256": instance_set.sha256, "instance_count": instance_set.count,
               "held_out": len(held_out.pairs),
               "hard_set": hard_set_version(task.name), "stopped_by": stopped_by,
               "seconds": round(time.perf_counter() - wall, 3),
               "dfst_cpu_seconds": round(time.process_time() - cpu, 3)} | task.describe()
    if error is not None:  # the lengths before it are kept; the CLI says it and exits 2
        details["error"] = error
    return Result(system=system, task=task.name, seed=cfg.seed, samples=None, params=None,
                  max_train_digits=None, robust_lg=max_passing(levels, "robust"),
                  probabilistic_lg=max_passing(levels, "probabilistic"), train_seconds=None, hardware=None,
                  levels=levels, config=cfg.to_dict() | (config or {}),
                  notes=f"dfst score: {instance_set.count:,} instances, sha256 {instance_set.sha256[:16]}",
                  details=details, dfst_version=__version__)


def score_level(answer: Answerer, task: Task, n: int, cfg: EvalConfig, instance_set: InstanceSet,
                on_progress: Progress | None = None, held_out: HeldOut | None = None) -> dict:
    """One length: its requests through `answer`, each answer checked against the task's; none of
    them a training pair of `held_out`."""
    start, level = time.perf_counter(), Level(n)
    held_out = held_out or HeldOut()
    hard = held_out.hard(task, n, is_first(n, cfg)) if cfg.hard else []
    total = len(hard) + cfg.random  # at most: a length whose every pair was trained on has fewer
    first = instance_set.count
    requests = instance_set.number(_chain(hard, random_stream(task, n, cfg.random, cfg.seed, held_out)))
    done = 0
    for request, given in answer(requests):
        level.add(request.id, request.instance, task.expected(request.instance), given)
        done += 1
        if on_progress is not None and (done % 64 == 0 or done == total):
            on_progress(n, done, total)
    sum(1 for _ in requests)  # draw what the model did not take: each is counted
    drawn = instance_set.count - first
    if done != drawn:
        raise DfstError(f"the model answered {done} of the {drawn} instances of length {n:,}")
    level.excluded = held_out.removed.get(n, 0)
    return level.record(time.perf_counter() - start)


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest
