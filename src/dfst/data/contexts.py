"""The trace-only sampler (`contexts`, the default): training instances chosen by what their PTOs
show, never by the expert's hidden states.

The expert is used as an oracle of PTOs: it is run on candidate operands (the task's structured
instances up to the training length, random pairs, random pairs with leading zeros: the pool of
`dfst.data.coverage.candidate_instances`), and each run's PTO is all that is looked at. The pool
grows by further batches of random pairs while each shows a pair of consecutive observations not
seen before (`grown_pool`): the base-2 tasks stop at one batch, the base-10 ones take 3-16,
since a rare combination (sub10's borrow into a 0 over a 2) shows in a few of 25,000 runs. A PTO's
*contexts* are its (read, write, move) n-grams of n consecutive steps (the first ones padded, so the
start is a context too); the instances are picked greedily, each the one whose PTO shows the most
contexts not yet shown, until none shows a new one, then random pairs fill up to `samples`. n is the
longest (from 2 to MAX_CONTEXT) whose cover fits in `samples`: the sample budget goes to PTOs that
show something new for as long as it lasts (mult2's 750 samples: 8 steps, a cover of 159 PTOs; with
pairs of steps, 7 PTOs and 743 random ones, and seeds 0-2 failed at 10 digits; docs/research/training.md).
Two agents whose PTOs are equal on every input (states renamed or reordered, a state split in two
equivalent copies) get the same instances, and so the same training set.

A run reports `samples` (the PTOs trained on) and `queries` (the expert runs spent choosing them:
the candidate pool). The samplers that read the expert's states (`cover`, `pairs`:
`dfst.data.coverage`) stay as options, labelled so.
"""

from __future__ import annotations

import heapq

import numpy as np

from dfst.data.pto import PtoDataset, dataset_of, record_run, sample_instance
from dfst.tasks.base import Instance, Task
from dfst.tasks.budget import COVER_CANDIDATES, POOL_BATCHES, POOL_STEPS  # budget.estimate_recording's

MIN_CONTEXT, MAX_CONTEXT = 2, 8  # steps per context: at least pairs of consecutive observations
POOL_STREAM = 7  # the further batches' random streams: [seed, POOL_STREAM, batch]


def observations(trace: np.ndarray) -> list[tuple]:
    """A PTO ((T, 3) array) as its (read, write, move) observations."""
    return [tuple(row) for row in trace.tolist()]


def contexts(steps: list[tuple], n: int) -> set[tuple]:
    """The n-grams of a PTO's observations (`observations`), the start padded."""
    padded = [None] * (n - 1) + steps
    return {tuple(padded[i:i + n]) for i in range(len(steps))}


def context_cover(steps: list[list[tuple]], samples: int) -> tuple[list[int], int]:
    """(indices into `steps`, each a PTO's `observations`; the context length n): the longest n whose
    whole cover fits in `samples`, else MIN_CONTEXT's cover cut at `samples` (`greedy_cover`)."""
    best = greedy_cover([contexts(s, MIN_CONTEXT) for s in steps], samples), MIN_CONTEXT
    for n in range(MIN_CONTEXT + 1, MAX_CONTEXT + 1):
        chosen = greedy_cover([contexts(s, n) for s in steps], samples + 1)
        if len(chosen) > samples:
            break
        best = chosen, n
    return best


def greedy_cover(shown_by: list[set], samples: int) -> list[int]:
    """Indices into `shown_by`, greedily: each adds the most contexts not yet shown (the first such on
    a tie), until `samples` are chosen or none adds any. Lazily: a gain only shrinks as contexts are
    shown, so a stale gain on the heap bounds the true one, and the first entry whose refreshed
    (gain, index) still leads is the greedy choice (the same choices as recomputing every gain)."""
    heap = [(-len(c), i) for i, c in enumerate(shown_by)]
    heapq.heapify(heap)
    chosen: list[int] = []
    shown: set[tuple] = set()
    while len(chosen) < samples and heap:
        _, i = heapq.heappop(heap)
        gain = len(shown_by[i] - shown)
        if gain == 0:
            continue  # a stale entry: nothing new any more, never again
        if heap and (-gain, i) > heap[0]:
            heapq.heappush(heap, (-gain, i))  # another may lead now: look again
            continue
        chosen.append(i)
        shown |= shown_by[i]
    return chosen


def grown_pool(task: Task, max_digits: int, rng: np.random.Generator,
               seed: int) -> tuple[list[Instance], list[np.ndarray], list[list[tuple]], int]:
    """(instances, their PTOs, those as `observations`, the expert runs spent): the first batch of
    candidates from `rng`, then further batches of random pairs, each from its own stream, for as
    long as a batch shows a pair of consecutive observations that no batch before it showed (at most
    POOL_BATCHES batches kept, none drawn once the kept PTOs hold POOL_STEPS steps). The batch that
    showed nothing new is not kept, but its runs are counted."""
    from dfst.data.coverage import candidate_instances, random_candidates

    pool = candidate_instances(task, max_digits, rng, COVER_CANDIDATES)
    traces = [record_run(task, inst) for inst in pool]
    steps = [observations(t) for t in traces]
    shown = set().union(*(contexts(s, MIN_CONTEXT) for s in steps))
    queries = len(pool)
    for batch in range(1, POOL_BATCHES):
        if sum(len(t) for t in traces) >= POOL_STEPS:
            break
        more = random_candidates(task, max_digits, np.random.default_rng([seed, POOL_STREAM, batch]),
                                 COVER_CANDIDATES)
        more_traces = [record_run(task, inst) for inst in more]
        more_steps = [observations(t) for t in more_traces]
        queries += len(more)
        new = set().union(*(contexts(s, MIN_CONTEXT) for s in more_steps)) - shown
        if not new:
            break
        shown |= new
        pool, traces, steps = pool + more, traces + more_traces, steps + more_steps
    return pool, traces, steps, queries


def context_cover_dataset(task: Task, samples: int, max_digits: int, seed: int) -> PtoDataset:
    """`samples` PTOs of at most max_digits digits: a cover of the contexts the pool's PTOs show, then
    random pairs (module docstring)."""
    rng = np.random.default_rng(seed)
    pool, traces, steps, queries = grown_pool(task, max_digits, rng, seed)
    picked, n = context_cover(steps, samples)
    instances, kept = [pool[i] for i in picked], [traces[i] for i in picked]
    while len(instances) < samples:
        instances.append(sample_instance(task, rng, 1, max_digits))
        kept.append(record_run(task, instances[-1]))
    sampling = {"rule": "contexts", "min_digits": 1, "max_digits": max_digits, "queries": queries,
                "context": n, "covering": len(picked)}
    return dataset_of(task, instances, kept, seed, sampling)
