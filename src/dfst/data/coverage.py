"""Which rules of an expert a set of instances exercises, and training sets that exercise them all.

A rule (state, symbol) that no PTO in the training set exercises cannot be learned: the data say
nothing about it. `cover_instances` picks instances greedily until every rule reachable from the
candidates is used, then fills up with random ones. `coverage_report` is what `dfst coverage` prints
(the smallest covering set, `--minimal`, is `dfst.data.cover_search.minimal_report`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dfst.automata import Transducer
from dfst.data.pto import dataset_instances, load_dataset, sample_instance
from dfst.grid.grid import Layout
from dfst.grid.world import run_agent
from dfst.tasks.base import Instance, Task

Rule = tuple[str, str]
PUBLISHED_SAMPLES = {"add2": 20, "add10": 225, "mult2": 750, "mult10": 10_000}  # the paper's training sets
__all__ = ["PUBLISHED_SAMPLES", "cover_instances", "coverage", "coverage_report",
           "dataset_instances", "file_instances", "rule_list", "rules_used"]


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
    """The task's structured instances up to max_digits (`Task.pool_instances`: never a test-only
    family), random pairs, and random pairs with leading zeros."""
    hard = [inst for n in range(1, max_digits + 1) for inst in task.pool_instances(n)]
    return hard + random_candidates(task, max_digits, rng, count)


def random_candidates(task: Task, max_digits: int, rng: np.random.Generator, count: int) -> list[Instance]:
    """`count` random pairs of at most max_digits digits, each followed by its twin with leading zeros
    on the first operand where the task allows it."""
    pool: list[Instance] = []
    for _ in range(count):
        inst = sample_instance(task, rng, 1, max_digits)
        zeros = int(rng.integers(1, max(2, max_digits)))
        padded = (task.operand_symbols[0] * zeros + inst.a)[:max_digits]  # leading zeros reach rules
        pool.append(inst)                                                  # nothing else reaches
        if task.domain_problem(padded, inst.b) is None:
            pool.append(Instance(padded, inst.b, "leading_zeros"))
    return pool


def cover_instances(task: Task, samples: int, max_digits: int, seed: int, candidates: int = 1000,
                    units: Callable[[Transducer, Layout, int], set] = rules_used) -> list[Instance]:
    """`samples` instances of at most max_digits digits: a greedy cover of the `units` the runs use
    (rules, or `rule_pairs_used`), then random pairs."""
    return counted_cover(task, samples, max_digits, seed, candidates, units)[0]


def counted_cover(task: Task, samples: int, max_digits: int, seed: int, candidates: int = 1000,
                  units: Callable[[Transducer, Layout, int], set] = rules_used
                  ) -> tuple[list[Instance], int, int]:
    """`cover_instances`, with the expert runs its candidate pools took and how many of the instances
    came from them (the rest are random fill-up pairs, runs of their own)."""
    rng = np.random.default_rng(seed)
    chosen: list[Instance] = []
    covered: set = set()  # rules, or rules and pairs of rules
    pool = candidate_instances(task, max_digits, rng, candidates)
    runs = len(pool)
    _greedy_cover(task, pool, samples, chosen, covered, units)
    if not covered >= set(task.agent.rules):
        # a rule the first pool missed (rare pairs such as a 9 over a 0 after a carry in add10): a
        # bigger pool from its own stream, so the first pool and the fill-up draw what they always drew
        extra = candidate_instances(task, max_digits, np.random.default_rng([seed, 1]), 8 * candidates)
        runs += len(extra)
        _greedy_cover(task, extra, samples, chosen, covered, units)
        _cover_missing_rules(task, extra, samples, chosen, covered)
    covering = len(chosen)
    while len(chosen) < samples:
        chosen.append(sample_instance(task, rng, 1, max_digits))
    return chosen, runs, covering


def _cover_missing_rules(task: Task, pool: list[Instance], samples: int, chosen: list[Instance],
                         covered: set) -> None:
    """Rules still missing once `samples` are chosen (a cover of rule pairs that outgrew them: sub10,
    mult10x1) take the places of the last picks, the least useful ones: every rule is shown first."""
    missing: set = set(task.agent.rules) - covered
    rare: list[Instance] = []
    for inst in pool:
        used = rules_used(task.agent, task.layout(inst), task.max_steps(inst))
        if used & missing:
            rare.append(inst)
            missing -= used
            covered |= used
        if not missing:
            break
    if rare:
        chosen[:] = chosen[: max(0, samples - len(rare))] + rare[:samples]


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


def file_instances(task: Task, path) -> tuple[list[Instance], dict]:
    """The checked instances of a PTO dataset file, and where they came from (for reports)."""
    return dataset_instances(task, load_dataset(path), str(path)), {"data": str(path)}


def coverage_report(task: Task, instances: list[Instance]) -> dict:
    """Plain-JSON coverage of the expert's rules by the instances' runs (`dfst coverage --json`)."""
    used, missing = coverage(task, instances)
    return {"task": task.name, "instances": len(instances), "rules": len(task.agent.rules),
            "covered": len(used), "used": rule_list(task, used), "missing": rule_list(task, missing)}


def rule_list(task: Task, keys) -> list[dict]:
    """The expert's rules for these (state, symbol) keys as dicts, in state then symbol order."""
    order = {q: i for i, q in enumerate(task.agent.states)}
    sym = {s: i for i, s in enumerate(task.alphabet)}
    ordered = sorted(keys, key=lambda key: (order[key[0]], sym[key[1]]))
    return [task.agent.rules[key].__dict__ for key in ordered]
