"""The protocol's instances, drawn one at a time, numbered, and hashed as they go.

At each length N: the task's hard set, then `random` pairs drawn from `default_rng(seed + N)`: as a
list (`level_instances`, what a DFST's rollout runs together), or as a stream (`level_stream`, so that
3,000 pairs of 10^5 digits never sit in memory together). Each instance gets an id (0, 1, 2, ...
across every length, in order) and a request line, `{"id": 7, "a": "987", "b": "45"}` and a newline:
what `dfst score --cmd` sends and what `--instances-out` writes. The set's hash is the SHA-256 of
those lines, in order: of the file `--instances-out` writes (`sha256sum FILE` gives it), so two
results with one hash used one set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from dfst.protocol.config import EvalConfig
from dfst.tasks.base import Instance, Task


class Request(NamedTuple):
    """One instance of the set: its id, the instance (with its hard-set name) and its request line."""

    id: int
    instance: Instance
    line: bytes


def level_instances(task: Task, n: int, cfg: EvalConfig) -> list[Instance]:
    """The instances of length n under `cfg`, as a list (a DFST's rollout runs them together)."""
    return list(level_stream(task, n, random=cfg.random, seed=cfg.seed, hard=cfg.hard))


def level_stream(task: Task, n: int, *, random: int, seed: int, hard: bool = True) -> Iterator[Instance]:
    """The instances of length n, one at a time: the hard set, then the random pairs."""
    if hard:
        yield from task.hard_instances(n)
    yield from random_stream(task, n, random, seed)


def random_stream(task: Task, n: int, count: int, seed: int) -> Iterator[Instance]:
    """`task.random_instances(n, count, seed=seed + n)`, one at a time."""
    rng = np.random.default_rng(seed + n)
    for _ in range(count):
        yield task.random_instance(rng, n, n)


def request_line(request_id: int, instance: Instance) -> bytes:
    """The JSON line dfst sends for one instance (no name: a model must not see which case it is)."""
    return (json.dumps({"id": request_id, "a": instance.a, "b": instance.b}) + "\n").encode()


class InstanceSet:
    """Numbers instances across lengths and hashes their request lines, in the order they are drawn."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.count = 0

    def number(self, instances: Iterator[Instance]) -> Iterator[Request]:
        for instance in instances:
            line = request_line(self.count, instance)
            self._hash.update(line)
            yield Request(self.count, instance, line)
            self.count += 1

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()
