"""Concrete task instances behind a symbol path: a counterexample to confirm in closed loop.

The lockstep paths are what the expert reads; an instance whose expert run starts by reading the
path drives the DFST to the same disagreement. Small operands are tried exhaustively (shortest
first), then the hard structured instances.
"""

from __future__ import annotations

import itertools

from dfst.automata import Transducer
from dfst.grid.rollout import DfstWeights, InstanceResult, first_disagreement, rollout, run_table
from dfst.tasks.base import Instance, Task

MAX_PAIRS = 20000  # instances tried at most


def small_instances(task: Task, max_len: int = 8):
    """The task's instances by growing length (leading zeros included: the grid shows every digit):
    operand pairs, or single operands for a task of one, and only those its domain accepts (a
    counterexample must be an instance: no a < b for sub2, no two-digit b for mult10x1)."""
    for n in range(1, max_len + 1):
        for a, b in _operands_of_length(task, n):
            if task.domain_problem(a, b) is None:
                yield Instance(a, b, "small")
        yield from task.hard_instances(n)


def _operands_of_length(task: Task, n: int):
    """Every (a, b) whose longer operand has n symbols (b is "" for a task of one operand)."""
    if task.operands == 1:
        yield from (("".join(a), "") for a in itertools.product(task.operand_symbols, repeat=n))
        return
    for la, lb in itertools.product(range(1, n + 1), repeat=2):
        if max(la, lb) == n:
            for a in itertools.product(task.operand_symbols, repeat=la):
                for b in itertools.product(task.operand_symbols, repeat=lb):
                    yield "".join(a), "".join(b)


def reads(task: Task, agent: Transducer, instance: Instance) -> list[int]:
    """The symbols the expert `agent` reads on `instance`, in order."""
    run = run_table(agent, task.layout(instance), task.max_steps(instance), record=True)
    return [int(x) for x in run.trace[:, 0]]


def instance_reading(task: Task, agent: Transducer, path: tuple[int, ...]) -> Instance | None:
    """The first small instance whose expert run reads `path` first, else a hard instance of about
    the path's length (long paths are pumped cycles: carry chains and the like)."""
    lengths = sorted({max(1, len(path) // f) for f in (8, 4, 2, 1)} | {2 * len(path)})
    hard = (i for n in lengths if n <= 100_000 for i in task.hard_instances(n))
    for instance in itertools.chain(itertools.islice(small_instances(task), MAX_PAIRS), hard):
        if reads(task, agent, instance)[: len(path)] == list(path):
            return instance
    return None


def departing_instance(task: Task, agent: Transducer, weights: DfstWeights, rescale: bool,
                       limit: int = MAX_PAIRS,
                       hard_lengths: tuple[int, ...] = (16, 64, 256)) -> Instance | None:
    """The first small instance on which the DFST's closed-loop run departs from the expert's (the
    symbol path may need a grid no instance draws; this finds a departure the grid shows), else the
    first hard instance of `hard_lengths` digits that does."""
    hard = (i for n in hard_lengths for i in task.hard_instances(n))
    for instance in itertools.chain(itertools.islice(small_instances(task), limit), hard):
        run = run_table(agent, task.layout(instance), task.max_steps(instance), record=True)
        if first_disagreement(weights, run.trace, rescale) is not None:
            return instance
    return None


def confirm(task: Task, weights: DfstWeights, instance: Instance, rescale: bool) -> InstanceResult:
    """The closed-loop verdict of the DFST on `instance` (the evaluator's engine and judge)."""
    return rollout(task, [instance], weights=weights, rescale=rescale, workers=1)[0]
