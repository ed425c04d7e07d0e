"""Which rules of an expert a set of instances exercises, and training sets that exercise them all.

A rule (state, symbol) that no PTO in the training set exercises cannot be learned: the data say
nothing about it. `cover_instances` picks instances greedily until every rule reachable from the
candidates is used, then fills up with random ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dfst.automata import Transducer
from dfst.data import PtoDataset, sample_instance
from dfst.grid.grid import Layout
from dfst.grid.world import run_agent
from dfst.tasks.base import Instance, Task

Rule = tuple[str, str]


def rules_used(agent: Transducer, layout: Layout, max_steps: int) -> set[Rule]:
    """The (state, symbol) pairs the agent's run on `layout` uses (the reference simulator's)."""
    return set(run_agent(agent, layout, max_steps, record=True).visited)


def rule_pairs_used(agent: Transducer, layout: Layout, max_steps: int) -> set:
    """The rules the run uses and the pairs of rules it uses one right after the other."""
    visited = run_agent(agent, layout, max_steps, record=True).visited
    return set(visited) | set(zip(visited, visited[1:]))


def coverage(task: Task, instances: list[Instance]) -> tuple[set[Rule], set[Rule]]:
    """(used, missing): the expert's rules that the instances exercise, and those they do not."""
    used: set[Rule] = set()
    for inst in instances:
        used |= rules_used(task.agent, task.layout(inst), task.max_steps(inst))
    return used, set(task.agent.rules) - used


def candidate_instances(task: Task, max_digits: int, rng: np.random.Generator, count: int) -> list[Instance]:
    """Hard instances up to max_digits, random pairs, and random pairs with leading zeros."""
    pool = [inst for n in range(1, max_digits + 1) for inst in task.hard_instances(n)]
    for _ in range(count):
        inst = sample_instance(task, rng, 1, max_digits)
        zeros = int(rng.integers(1, max(2, max_digits)))
        padded = ("0" * zeros + inst.a)[:max_digits]  # leading zeros reach rules nothing else reaches
        pool += [inst, Instance(padded, inst.b, "leading_zeros")]
    return pool


def cover_instances(task: Task, samples: int, max_digits: int, seed: int, candidates: int = 1000,
                    units: Callable[[Transducer, Layout, int], set] = rules_used) -> list[Instance]:
    """`samples` instances of at most max_digits digits: a greedy cover of the `units` the runs use
    (rules, or `rule_pairs_used`), then random pairs."""
    rng = np.random.default_rng(seed)
    chosen: list[Instance] = []
    covered: set = set()  # rules, or rules and pairs of rules
    pool = candidate_instances(task, max_digits, rng, candidates)
    _greedy_cover(task, pool, samples, chosen, covered, units)
    if len(chosen) < samples and not covered >= set(task.agent.rules):
        # a rule the first pool missed (rare pairs such as a 9 over a 0 after a carry in add10): a
        # bigger pool from its own stream, so the first pool and the fill-up draw what they always drew
        extra = candidate_instances(task, max_digits, np.random.default_rng([seed, 1]), 8 * candidates)
        _greedy_cover(task, extra, samples, chosen, covered, units)
    while len(chosen) < samples:
        chosen.append(sample_instance(task, rng, 1, max_digits))
    return chosen


def _greedy_cover(task: Task, pool: list[Instance], samples: int, chosen: list[Instance],
                  covered: set, units: Callable[[Transducer, Layout, int], set]) -> None:
    """Add to `chosen` the pool instance that uses the most units not yet covered, until none adds any."""
    used_by = [units(task.agent, task.layout(i), task.max_steps(i)) for i in pool]
    while len(chosen) < samples:
        gains = [len(u - covered) for u in used_by]
        best = int(np.argmax(gains))
        if gains[best] == 0:
            return
        chosen.append(pool[best])
        covered |= used_by[best]


def dataset_instances(task: Task, ds: PtoDataset, source: str = "the dataset") -> list[Instance]:
    """The instances of a PTO dataset, checked: same task, and every stored PTO is the expert's replay
    (so the rules the replay uses are the rules the PTOs exercise)."""
    from dfst.arith import check_operand
    from dfst.errors import DfstError
    from dfst.rollout import run_table

    if ds.task != task.name:
        raise DfstError(f"{source} holds {ds.task} PTOs, not {task.name}")
    instances = []
    for i, (a, b) in enumerate(ds.operands):
        inst = Instance(check_operand(a, task.base, f"{source}: operand"),
                        check_operand(b, task.base, f"{source}: operand"), "data")
        run = run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
        if not np.array_equal(run.trace, ds.trace(i)):
            raise DfstError(f"{source}: sample {i} ({a}, {b}) is not the {task.name} expert's run")
        instances.append(inst)
    return instances
