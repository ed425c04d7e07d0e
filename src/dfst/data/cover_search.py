"""The smallest training set that exercises every rule of an expert: greedy set cover, pruning, bounds.

Each candidate instance (operands of at most L digits, leading zeros allowed: the grid shows every
digit, and some rules are reached only through them) exercises a set of (state, symbol) rules. We
want few instances whose sets cover every rule any candidate reaches:

1. the pool: every operand pair up to L digits when there are at most `EXHAUSTIVE_PAIRS` of them,
   otherwise every pair up to the largest length that fits, plus the hard instances and a seeded
   random pool with leading-zero variants (`dfst.data.coverage.candidate_instances`);
2. greedy set cover (the classic ln(n)-approximation), deterministic and then with seeded random
   tie-breaking, each followed by removal of instances one by one while the rest still cover
   everything, so no instance of the answer is redundant; the smallest wins;
3. bounds. Every run ends with exactly one halting rule, so a cover needs at least as many instances
   as there are halting rules to cover: true over all instances. When the pool has at most
   `BRANCH_MAX_SETS` distinct rule sets a budgeted branch and bound finds the minimum over the pool;
   with an exhaustive pool that minimum is the minimum over every instance of at most L digits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from dfst.data.coverage import PUBLISHED_SAMPLES, Rule, candidate_instances, rule_list, rules_used
from dfst.tasks.base import Instance, Task
from dfst.tasks.budget import Estimate, candidate_pool, estimate_of, with_replays

EXHAUSTIVE_PAIRS = 50_000  # operand pairs enumerated in full at most
BRANCH_BUDGET = 200_000  # search nodes of the branch and bound
BRANCH_MAX_SETS = 3000  # distinct rule sets beyond which the branch and bound is not tried
RESTARTS = 10  # greedy passes with random tie-breaking after the deterministic one


@dataclass(frozen=True)
class Pool:
    """Candidates with distinct rule sets (the shortest instance of each), as bitmasks over `rules`."""

    rules: tuple[Rule, ...]  # bit i of a mask is rules[i]
    instances: list[Instance]
    masks: list[int]
    drawn: int  # instances examined before removing duplicate rule sets
    exhaustive: bool  # every operand pair of at most max_digits digits was examined


@dataclass(frozen=True)
class CoverResult:
    """A covering set, how it was found, and what bounds the minimum."""

    task: str
    max_digits: int
    pool: Pool
    greedy: list[int]  # pool indices chosen by the greedy pass
    chosen: list[int]  # pool indices after pruning (and branch and bound, if it improved)
    halting_bound: int  # lower bound over all instances: one halting rule per run
    pool_minimum: int | None  # minimum over the pool, when the branch and bound finished
    seconds: float

    @property
    def instances(self) -> list[Instance]:
        return [self.pool.instances[i] for i in self.chosen]

    @property
    def reachable(self) -> set[Rule]:
        return mask_rules(self.pool.rules, union(self.pool.masks))

    @property
    def lower_bound(self) -> int:
        """Valid for every instance of at most max_digits digits (not only the pool)."""
        exact = self.pool_minimum if self.pool.exhaustive and self.pool_minimum is not None else 0
        return max(self.halting_bound, exact)


def pool_instances(task: Task, max_digits: int, seed: int, count: int) -> tuple[list[Instance], bool]:
    """(candidates, exhaustive): all pairs when affordable, else all short pairs plus a seeded pool."""
    full = task.exhaustive_length(EXHAUSTIVE_PAIRS, max_digits)
    pairs = task.short_instances(full)
    if full == max_digits:
        return pairs, True
    return pairs + candidate_instances(task, max_digits, np.random.default_rng(seed), count), False


def build_pool(task: Task, max_digits: int, seed: int = 0, count: int = 5000,
               progress: Callable[[int, int], None] | None = None) -> Pool:
    """Replay the expert on every candidate and keep one (the shortest) per distinct rule set."""
    candidates, exhaustive = pool_instances(task, max_digits, seed, count)
    rules = tuple(sorted(task.agent.rules))
    bit = {r: 1 << i for i, r in enumerate(rules)}
    best: dict[int, Instance] = {}
    for done, inst in enumerate(candidates, 1):
        mask = 0
        for rule in rules_used(task.agent, task.layout(inst), task.max_steps(inst)):
            mask |= bit[rule]
        size = len(inst.a) + len(inst.b)
        if mask not in best or size < len(best[mask].a) + len(best[mask].b):
            best[mask] = inst
        if progress is not None and done % 500 == 0:
            progress(done, len(candidates))
    masks = sorted(best, key=lambda m: (-m.bit_count(), m))  # largest sets first: greedy ties, pruning
    return Pool(rules, [best[m] for m in masks], masks, len(candidates), exhaustive)


def union(masks) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def mask_rules(rules: tuple[Rule, ...], mask: int) -> set[Rule]:
    return {r for i, r in enumerate(rules) if mask >> i & 1}


def greedy_cover(masks: list[int], target: int, rng: np.random.Generator | None = None) -> list[int]:
    """Repeatedly the candidate that covers most uncovered rules (first on ties, or random with rng)."""
    chosen, left = [], target
    while left:
        gains = np.array([(m & left).bit_count() for m in masks])
        if gains.max() == 0:
            raise ValueError("the target has rules no candidate covers")
        ties = np.flatnonzero(gains == gains.max())
        best = int(ties[0] if rng is None else rng.choice(ties))
        chosen.append(best)
        left &= ~masks[best]
    return chosen


def prune(chosen: list[int], masks: list[int], target: int) -> list[int]:
    """Drop instances one by one (fewest rules first) while the rest still cover the target."""
    keep = list(chosen)
    for i in sorted(chosen, key=lambda i: masks[i].bit_count()):
        rest = [j for j in keep if j != i]
        if union(masks[j] for j in rest) & target == target:
            keep = rest
    return keep


def is_irredundant(chosen: list[int], masks: list[int], target: int) -> bool:
    """True when removing any one chosen instance loses a rule of the target."""
    return all(union(masks[j] for j in chosen if j != i) & target != target for i in chosen)


def maximal(masks: list[int]) -> list[int]:
    """Indices of masks that are not a subset of another (masks sorted largest first)."""
    kept: list[int] = []
    for i, m in enumerate(masks):
        if not any(m & ~masks[j] == 0 for j in kept):
            kept.append(i)
    return kept


class _Budget(Exception):
    pass


def branch_and_bound(masks: list[int], target: int, incumbent: list[int],
                     budget: int = BRANCH_BUDGET) -> tuple[list[int], bool]:
    """(best cover found, proved minimal). Branches on the uncovered rule with fewest candidates;
    prunes with ceil(uncovered / largest gain). Only maximal masks can be needed in a minimum."""
    cands = maximal(masks)
    by_bit: dict[int, list[int]] = {}
    for i in cands:
        m = masks[i] & target
        while m:
            low = m & -m
            by_bit.setdefault(low, []).append(i)
            m ^= low
    best, nodes = list(incumbent), 0

    def search(left: int, chosen: list[int]) -> None:
        nonlocal best, nodes
        if not left:
            best = list(chosen) if len(chosen) < len(best) else best
            return
        nodes += 1
        if nodes > budget:
            raise _Budget
        gain = max((masks[i] & left).bit_count() for i in cands)
        if len(chosen) + -(-left.bit_count() // gain) >= len(best):
            return
        bits = []
        m = left
        while m:
            low = m & -m
            bits.append(low)
            m ^= low
        pivot = min(bits, key=lambda b: len(by_bit[b]))
        for i in sorted(by_bit[pivot], key=lambda i: -(masks[i] & left).bit_count()):
            chosen.append(i)
            search(left & ~masks[i], chosen)
            chosen.pop()

    try:
        search(target, [])
    except _Budget:
        return best, False
    return best, True


def halting_rules(task: Task) -> set[Rule]:
    return {key for key, rule in task.agent.rules.items() if rule.next == task.agent.final}


def minimal_cover(task: Task, max_digits: int, *, seed: int = 0, pool_size: int = 5000,
                  budget: int = BRANCH_BUDGET, restarts: int = RESTARTS,
                  progress: Callable[[int, int], None] | None = None) -> CoverResult:
    """A small irredundant set of instances of at most max_digits digits covering every reachable rule."""
    if max_digits < 1:
        raise ValueError("max_digits must be at least 1")
    start = time.perf_counter()
    pool = build_pool(task, max_digits, seed, pool_size, progress)
    target = union(pool.masks)
    greedy = greedy_cover(pool.masks, target)
    chosen = prune(greedy, pool.masks, target)
    rng = np.random.default_rng(seed)
    for _ in range(restarts):  # random tie-breaking finds smaller covers now and then
        other = prune(greedy_cover(pool.masks, target, rng), pool.masks, target)
        chosen = other if len(other) < len(chosen) else chosen
    proved = False
    if len(pool.masks) <= BRANCH_MAX_SETS:
        found, proved = branch_and_bound(pool.masks, target, chosen, budget)
        chosen = prune(found, pool.masks, target) if len(found) < len(chosen) else chosen
    halting = len(halting_rules(task) & mask_rules(pool.rules, target))
    return CoverResult(task.name, max_digits, pool, greedy, chosen, halting,
                       len(chosen) if proved else None, round(time.perf_counter() - start, 3))


def minimal_report(task: Task, max_digits: int, seed: int = 0, pool: int = 5000,
                   progress: Callable[[int, int], None] | None = None) -> dict:
    """`minimal_cover` as plain JSON (what `dfst coverage --minimal --json` prints): the cover, its
    bounds, the pool it was drawn from and the rules no candidate reaches."""
    result = minimal_cover(task, max_digits, seed=seed, pool_size=pool, progress=progress)
    p, target = result.pool, union(result.pool.masks)
    return {"task": task.name, "max_digits": max_digits, "seed": seed, "rules": len(task.agent.rules),
            "reachable": len(result.reachable),
            "unreachable": rule_list(task, set(task.agent.rules) - result.reachable),
            "pool": {"instances": p.drawn, "distinct_rule_sets": len(p.masks), "exhaustive": p.exhaustive},
            "greedy_size": len(result.greedy), "size": len(result.chosen),
            "lower_bound": result.lower_bound, "halting_bound": result.halting_bound,
            "pool_minimum": result.pool_minimum, "proved_minimal": result.lower_bound == len(result.chosen),
            "irredundant": is_irredundant(result.chosen, p.masks, target),
            "published_samples": PUBLISHED_SAMPLES.get(task.name),
            "instances": [[i.a, i.b] for i in result.instances], "seconds": result.seconds}


def estimate_minimal(task: Task, max_digits: int, pool: int) -> Estimate:
    """dfst coverage --minimal (dfst.data.cover_search): every pair up to the longest length whose
    pairs number at most EXHAUSTIVE_PAIRS, and `candidate_pool` when that is not max_digits, each
    replayed once (the cover is then searched on bitmasks, within BRANCH_BUDGET nodes)."""
    full = task.exhaustive_length(EXHAUSTIVE_PAIRS, max_digits)
    pairs = task.short_count(full) if full else 0
    short = max(full, 1)
    estimate = with_replays(estimate_of(task, short, short, {}), task, short, pairs, 2 * full * pairs)
    if full == max_digits:
        return estimate
    runs, held = candidate_pool(task, max_digits, pool)
    more = with_replays(estimate_of(task, max_digits, max_digits, {}), task, max_digits, runs, held)
    parts = {name: estimate.parts[name] + more.parts[name] for name in more.parts}
    return replace(more, parts=parts, replays=estimate.replays + more.replays)
