"""Validation PTOs: the expert's PTOs on operands a little longer than the training data's, which the
automaton read off a trained model must reproduce for its d to count as enough (`dfst.train.dsize`).

An automaton that explains every training PTO may still be another algorithm: sub10's 225 PTOs of at
most 3 digits at d = 12 read off a 22-state automaton that borrows correctly along the chains it saw
and wrongly along longer ones (docs/research/training.md). A learner may query the expert (an oracle of PTOs,
as the contexts sampler does), so training tests the automaton against the expert's PTOs on
VALIDATION_PAIRS random pairs and the task's structured instances at each of the VALIDATION_LENGTHS
lengths past the training data's: testing as the equivalence oracle, with no state read. Short
operands are tested too: a rule that only short instances fire (eq3's answer on one-digit operands)
hides from longer ones, so `short_held_out` adds every instance of the training data's lengths that
are few enough to run all (SHORT_HELD_OUT) and that training did not see. These runs are counted as
queries, and the operands are kept in RUN/validation.pto.zip and held out of every
test of the run's models as its training pairs are.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import Transducer
from dfst.data.pto import PtoDataset, dataset_of, record_run
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.tasks.base import Instance, Task

VALIDATION_LENGTHS = 3    # lengths max_digits + 1 .. max_digits + 3
VALIDATION_PAIRS = 30     # random pairs at each length, besides the task's structured instances there
VALIDATION_STREAM = 11    # their random stream: [seed, VALIDATION_STREAM]
SHORT_HELD_OUT = 1000     # every instance up to the longest length (the data's at most) with this many


def validation_set(task: Task, max_digits: int, seed: int) -> PtoDataset:
    """The expert's PTOs on the structured instances of each length past `max_digits` (those as long
    as it) and VALIDATION_PAIRS random pairs there (module docstring)."""
    return validation_dataset(task, validation_instances(task, max_digits, seed), seed)


def validation_instances(task: Task, max_digits: int, seed: int, round_: int = 0) -> list[Instance]:
    """The instances of `validation_set`, distinct; `round_` > 0: a later round of data growth's
    (`dfst.train.growth`), its random pairs from a stream of their own."""
    rng = np.random.default_rng([seed, VALIDATION_STREAM] + ([round_] if round_ else []))
    lengths = range(max_digits + 1, max_digits + 1 + VALIDATION_LENGTHS)
    instances = [inst for n in lengths for inst in task.pool_instances(n)
                 if inst.length == n]  # a hard set's short instances are within reach
    instances += [task.random_instance(rng, n, n) for n in lengths for _ in range(VALIDATION_PAIRS)]
    return distinct(instances)


def distinct(instances: list[Instance]) -> list[Instance]:
    """`instances` without repeated operand pairs, each where it first appears (a later round of data
    growth draws the structured instances of lengths an earlier one drew already)."""
    return list({(inst.a, inst.b): inst for inst in instances}.values())


def short_held_out(task: Task, max_digits: int, trained: set[tuple[str, str]]) -> list[Instance]:
    """Every instance of operands of at most k symbols that is not in `trained` (operand pairs), k the
    longest length up to `max_digits` with at most SHORT_HELD_OUT instances: shortest first."""
    short = [Instance(inst.a, inst.b, "short")
             for inst in task.short_instances(task.exhaustive_length(SHORT_HELD_OUT, max_digits))
             if (inst.a, inst.b) not in trained]
    return sorted(short, key=lambda inst: inst.length)


def validation_dataset(task: Task, instances: list[Instance], seed: int) -> PtoDataset:
    """The expert's PTOs on validation `instances`, each run counted as a query."""
    sizes = [inst.length for inst in instances]
    sampling = {"rule": "validation", "min_digits": min(sizes), "max_digits": max(sizes),
                "queries": len(instances)}
    return oracle_dataset(task, instances, seed, sampling)


def oracle_dataset(task: Task, instances: list[Instance], seed: int, sampling: dict) -> PtoDataset:
    """The expert's PTOs on `instances`, recorded as the samplers record theirs: the expert is run and
    its PTOs are all that comes back (the dataset's reference fields are the recorder's, as in
    every PTO file)."""
    return dataset_of(task, instances, [record_run(task, inst) for inst in instances], seed, sampling)


def first_disagreement(agent: Transducer, task: Task, validation: PtoDataset) -> dict | None:
    """The first validation instance on which `agent` (an automaton read off) does not produce the
    expert's PTO, as {"a", "b", "steps"} (`steps`: how far they agree); None when it reproduces all."""
    found = disagreements(agent, task, validation, limit=1)
    return found[0] if found else None


def disagreements(agent: Transducer, task: Task, validation: PtoDataset, limit: int) -> list[dict]:
    """The first `limit` validation instances, in the set's order, on which `agent` does not produce
    the expert's PTO ({"a", "b", "steps"} each, as `first_disagreement`)."""
    found = []
    for index, (a, b) in enumerate(validation.operands):
        expected = validation.trace(index)
        run = run_table(agent, task.layout(Instance(a, b, "validation")), len(expected), record=True)
        agree = _agreeing_steps(run.trace, expected)
        if run.outcome != Outcome.HALTED or agree < len(expected):  # at most len(expected) steps run
            found.append({"a": a, "b": b, "steps": agree})
            if len(found) == limit:
                break
    return found


def _agreeing_steps(trace: np.ndarray, expected: np.ndarray) -> int:
    """How many first steps of two PTOs ((T, 3) arrays) are equal."""
    n = min(len(trace), len(expected))
    differ = np.flatnonzero((trace[:n] != expected[:n]).any(axis=1))
    return int(differ[0]) if len(differ) else n
