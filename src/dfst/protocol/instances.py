"""The protocol's instances, drawn one at a time, numbered, and hashed as they go.

At each length N: the task's hard set, then `random` pairs drawn from `default_rng(seed + N)`, as a
list (`level_instances`, what a DFST's rollout runs together), or as a stream (`level_stream`, so that
3,000 pairs of 10^5 digits never sit in memory together). The hard set is whole at the ladder's first
length; from the second on it holds the instances of length N only (`hard_at`: 0 + 0 and the like
are scored once, not at every length). In a task of two operands of any length every other random
pair has operands of unequal lengths (`random_lengths`: the shorter of 1 to N - 1 digits, either one
first). Each instance gets an id (0, 1, 2, ...
across every length, in order) and a request line, `{"id": 7, "a": "987", "b": "45"}` and a newline:
what `dfst score --cmd` sends and what `--instances-out` writes. The set's hash is the SHA-256 of
those lines, in order: of the file `--instances-out` writes (`sha256sum FILE` gives it), so two
results with one hash used one set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dfst.errors import DfstError
from dfst.io.inputs import parse_json, read_text
from dfst.protocol.config import EvalConfig
from dfst.tasks.base import Instance, Task


class Request(NamedTuple):
    """One instance of the set: its id, the instance (with its hard-set name) and its request line."""

    id: int
    instance: Instance
    line: bytes


MAX_REDRAWS = 1000  # random pairs in a row found in the training data before a length has no more


class HeldOut:
    """The operand pairs a model was trained on, kept out of its tests: a hard instance among them is
    left out, a random pair among them is drawn again from the same generator (so that with no
    training pairs the set is exactly the set without them). `removed[n]` counts both at length n."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self.pairs = frozenset((a, b) for a, b in pairs)
        self.removed: dict[int, int] = {}

    def __contains__(self, instance: Instance) -> bool:
        return (instance.a, instance.b) in self.pairs

    def hard(self, task: Task, n: int, whole: bool = True) -> list[Instance]:
        """`hard_at(task, n, whole)`, less the training pairs."""
        hard = hard_at(task, n, whole)
        kept = [instance for instance in hard if instance not in self]
        self.removed[n] = self.removed.get(n, 0) + len(hard) - len(kept)
        return kept

    def draw(self, task: Task, rng: np.random.Generator, n: int, m: int | None = None) -> Instance | None:
        """A random pair of n and m digits (m = n by default) that is not a training pair, each
        training pair drawn on the way counted in `removed`; None when MAX_REDRAWS draws in a row were
        training pairs (the data holds every pair of that length, or nearly: the length then has
        fewer random pairs, and those draws are not counted)."""
        for tries in range(MAX_REDRAWS):
            instance = task.random_instance(rng, n, n if m is None else m)
            if instance not in self:
                self.removed[n] = self.removed.get(n, 0) + tries
                return instance
        return None


def hard_at(task: Task, n: int, whole: bool = True) -> list[Instance]:
    """The hard set at n digits: whole at a ladder's first length, else only its instances of n
    symbols (the longer operand's), so that a short instance is not scored again at every length."""
    hard = task.hard_instances(n)
    return hard if whole else [instance for instance in hard if instance.length >= n]


def random_lengths(task: Task, rng: np.random.Generator, n: int, index: int) -> tuple[int, int]:
    """The operand lengths of the `index`-th random pair at n: (n, n), or every other pair of a task
    of two operands of any length (n, m) or (m, n) with m drawn from 1..n-1 (a fault past the
    shorter operand shows only there)."""
    if task.operands == 1 or task.b_length is not None or n < 2 or index % 2 == 0:
        return n, n
    m = int(rng.integers(1, n))
    return (n, m) if rng.integers(2) else (m, n)


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """The operand pairs of a JSON Lines file, one `{"a": "...", "b": "..."}` a line (`b` may be
    missing for a task of one operand; other keys, such as a request's `id`, are ignored): the lines
    `--instances-out` writes, so a model's training set can be written as its test set is."""
    text = read_text(path, "training pairs file", "json_bytes")
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item = parse_json(line, f"training pairs file {path} line {number}")
        if not (isinstance(item, dict) and isinstance(item.get("a"), str)
                and isinstance(item.get("b", ""), str)):
            raise DfstError(f'training pairs file {path} line {number}: expected {{"a": "...", "b": "..."}}')
        pairs.append((item["a"], item.get("b", "")))
    return pairs


def level_instances(task: Task, n: int, cfg: EvalConfig, held_out: HeldOut | None = None) -> list[Instance]:
    """The instances of length n under `cfg`, as a list (a DFST's rollout runs them together)."""
    return list(level_stream(task, n, random=cfg.random, seed=cfg.seed, hard=cfg.hard,
                             whole=is_first(n, cfg), held_out=held_out))


def is_first(n: int, cfg: EvalConfig) -> bool:
    """Whether n is the first length of `cfg`'s ladder (its hard set is scored whole)."""
    return n <= min(cfg.digits)


def level_stream(task: Task, n: int, *, random: int, seed: int, hard: bool = True, whole: bool = True,
                 held_out: HeldOut | None = None) -> Iterator[Instance]:
    """The instances of length n, one at a time: the hard set (`hard_at`), then the random pairs,
    none of them a training pair of `held_out`."""
    held_out = held_out or HeldOut()
    if hard:
        yield from held_out.hard(task, n, whole)
    yield from random_stream(task, n, random, seed, held_out)


def random_stream(task: Task, n: int, count: int, seed: int,
                  held_out: HeldOut | None = None) -> Iterator[Instance]:
    """`task.random_instances(n, count, seed=seed + n)`, one at a time, a training pair drawn again;
    fewer when the training data holds (nearly) every pair of length n."""
    held_out = held_out or HeldOut()
    rng = np.random.default_rng(seed + n)
    for index in range(count):
        instance = held_out.draw(task, rng, *random_lengths(task, rng, n, index))
        if instance is None:
            return
        yield instance


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
            request = Request(self.count, instance, line)
            self.count += 1  # before the request leaves: `count` is every request drawn so far
            yield request

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()
