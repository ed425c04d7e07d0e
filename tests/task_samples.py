"""Shared by the tests that run the reference simulator over tasks' hard sets: a sample of a large set.

The reference simulator (`dfst.grid.world.run_agent`) takes about 5 us a step in Python. By their step
bounds, div10x1's hard sets at 1..6 digits are 15 million steps and mult10x1's 5.7 million; no other
task's passes 100,000 at one length. Every hard instance's answer is still checked with the table
engine (`test_experts.py::test_every_hard_instance_is_solved`)."""

from __future__ import annotations

import random

from dfst.tasks import Instance, Task

# Steps (by the task's bound) of one length's hard set that a reference-simulator test runs in full.
STEP_BUDGET = 100_000


def within_steps(task: Task, instances: list[Instance], seed: int,
                 budget: int = STEP_BUDGET) -> list[Instance]:
    """The instances, or a seeded sample of them whose step bounds add up to at most `budget`."""
    if sum(task.max_steps(i) for i in instances) <= budget:
        return instances
    sample, spent = [], 0
    for instance in random.Random(seed).sample(instances, len(instances)):
        spent += task.max_steps(instance)
        if spent > budget:
            break
        sample.append(instance)
    return sample


def hard_cases(task: Task, lengths: range) -> list[Instance]:
    """The hard set at each length, sampled where it is over the budget (seeded by the length)."""
    return [i for n in lengths for i in within_steps(task, task.hard_instances(n), seed=n)]
