"""Mutation testing of the evaluation protocol: does the hard set catch every wrong expert?

A mutant is the task's expert with one rule rewired: its written symbol, its move or its next state
changed (halting rules keep their move S and the final state, so only their write changes). The
protocol (hard instances + 10 random pairs per length, `dfst.protocol.evaluate.level_instances`, seed 0) at
3, 30 and 300 digits *kills* a mutant when some instance's answer is wrong or the run does not halt.
A mutant the protocol misses is then

- a *blind spot*: an instance of at most 300 digits kills it, which the protocol should have had
  (found by a search: every pair up to `EXHAUSTIVE_PAIRS` pairs, then seeded random pairs of
  unequal lengths up to 300 digits, and near ties: equal lengths, a few symbols apart);
- *equivalent*, proved: the mutant compiled to a DFST never leaves the expert's policy in lockstep,
  and is CERTIFIED against it for every length (`dfst.certify`);
- *unknown*: neither; the report gives the symbol path where the policies part (typically a
  rewired write on a cell nothing reads again: the trace changes, the answer does not).

The mutation score is killed / (killed + blind spots); equivalent mutants do not count against it.
"""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from dfst.automata import HALT_MOVE, Rule, Transducer, make_transducer
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import level_instances
from dfst.studies.executors import check_workers
from dfst.tasks.base import Instance, Task
from dfst.tasks.solve import solve

PROTOCOL_DIGITS = (3, 30, 300)
SEARCH_RANDOM = 300  # random pairs of the search, lengths 1..MAX_SEARCH_DIGITS
MAX_SEARCH_DIGITS = 300
EXHAUSTIVE_PAIRS = 20_000  # every operand pair up to the longest length whose pairs fit
# near ties of the search: pairs of equal length that differ in NEAR_TIE_CHANGES symbols or fewer, where
# a comparison or a borrow is decided late; random pairs almost never are
SEARCH_NEAR_TIES, NEAR_TIE_CHANGES = 300, 3


@dataclass(frozen=True)
class Mutant:
    """The expert with rule (state, read)'s `field` set to `value`."""

    state: str
    read: str
    field: str  # "write", "move" or "next"
    value: str

    def __str__(self) -> str:
        return f"({self.state}, {self.read}) {self.field} -> {self.value}"

    def apply(self, agent: Transducer) -> Transducer:
        rules = dict(agent.rules)
        rule = rules[(self.state, self.read)]
        rules[(self.state, self.read)] = Rule(**{**rule.__dict__, self.field: self.value})
        return make_transducer(agent.states, agent.alphabet, rules.values(), initial=agent.initial,
                               final=agent.final, blank=agent.blank, name=f"{agent.name}-mutant")


def mutants(agent: Transducer) -> list[Mutant]:
    """Every single-rule rewiring that is still a valid agent, in the agent's rule order."""
    found = []
    for (state, read), rule in sorted(agent.rules.items(), key=lambda item: _order(agent, item[0])):
        found += [Mutant(state, read, "write", s) for s in agent.alphabet if s != rule.write]
        if rule.move == HALT_MOVE:
            continue
        found += [Mutant(state, read, "move", m) for m in "UDLR" if m != rule.move]
        found += [Mutant(state, read, "next", q) for q in agent.states if q not in (rule.next, agent.final)]
    return found


def _order(agent: Transducer, key: tuple[str, str]) -> tuple[int, int]:
    return agent.states.index(key[0]), agent.alphabet.index(key[1])


def kills(task: Task, agent: Transducer, instance: Instance) -> bool:
    """Whether `agent`'s run on `instance` is wrong: no halt, or not the task's answer."""
    return not solve(task, instance, agent).correct


def protocol_kill(task: Task, agent: Transducer, lengths=PROTOCOL_DIGITS) -> int | None:
    """The first protocol length at which some instance kills `agent`; None if none does."""
    cfg = EvalConfig(digits=tuple(lengths))
    for n in lengths:
        if any(kills(task, agent, inst) for inst in level_instances(task, n, cfg)):
            return n
    return None


def search_instances(task: Task, seed: int = 0) -> list[Instance]:
    """The search for a killing instance: every pair up to the longest length whose pairs number at
    most EXHAUSTIVE_PAIRS (leading zeros included), then seeded random pairs of unequal lengths, then
    (two operands of any length) seeded near ties."""
    found = task.short_instances(max(1, task.exhaustive_length(EXHAUSTIVE_PAIRS)))
    rng = np.random.default_rng(seed)
    for _ in range(SEARCH_RANDOM):  # lengths log-uniform in 1..MAX_SEARCH_DIGITS, drawn apart
        la, lb = (_search_length(rng) for _ in range(2))
        found.append(task.random_instance(rng, la, lb))
    if task.operands == 2 and task.b_length is None:
        found += [tie for _ in range(SEARCH_NEAR_TIES) if (tie := near_tie(task, rng, _search_length(rng)))]
    return found


def _search_length(rng: np.random.Generator) -> int:
    """A length log-uniform in 1..MAX_SEARCH_DIGITS."""
    return max(1, int(np.exp(rng.uniform(0, np.log(MAX_SEARCH_DIGITS))).round()))


def near_tie(task: Task, rng: np.random.Generator, n: int) -> Instance | None:
    """Random operands a and b of about n symbols (as the task draws them), b differing from a in at
    most NEAR_TIE_CHANGES places (the symbols taken from a second random operand, so a leading one
    stays a valid leading symbol); in the order the task accepts, None where neither is an instance."""
    a, donor = task.random_instance(rng, n, n).a, task.random_instance(rng, n, n).a
    b, width = list(a), min(len(a), len(donor))  # a task's own generator may not hit n exactly
    for i in rng.choice(width, size=min(width, int(rng.integers(1, NEAR_TIE_CHANGES + 1))), replace=False):
        b[i] = donor[i]
    for x, y in ((a, "".join(b)), ("".join(b), a)):
        if task.domain_problem(x, y) is None:
            return Instance(x, y, "near_tie")
    return None


STATUSES = ("killed", "equivalent", "blind spot", "unknown")


@dataclass
class Verdict:
    mutant: Mutant
    status: str  # "killed", "equivalent", "blind spot", "unknown"
    detail: str  # the killing length, the certificate, or the instance


def judge(task: Task, mutant: Mutant, search: Callable[[], list[Instance]]) -> Verdict:
    """The protocol first; a survivor is searched for a killing instance (`search()`), else given to
    the lockstep exploration: if the mutant's policy never leaves the expert's, that is a proof for
    every length (`dfst.certify`, checked); else it is unknown, with the symbol path where the
    policies part."""
    from dfst.certify import certify
    from dfst.certify.lockstep import Disagreement, explore
    from dfst.grid.rollout import DfstWeights
    from dfst.model.compile import compile_agent

    agent = mutant.apply(task.agent)
    length = protocol_kill(task, agent)
    if length is not None:
        return Verdict(mutant, "killed", f"at {length} digits")
    instances = search()
    for inst in instances:
        if kills(task, agent, inst):
            return Verdict(mutant, "blind spot", f"{inst.a} and {inst.b} ({inst.name} search)")
    weights = DfstWeights.of(*compile_agent(agent).numpy_weights())
    parted = explore(weights, task.agent, rescale=False)
    if not isinstance(parted, Disagreement):
        result = certify(weights, task)
        if result.verdict == "CERTIFIED" and result.max_digits is None:
            return Verdict(mutant, "equivalent", "CERTIFIED against the expert for every length")
    where = "" if not isinstance(parted, Disagreement) else \
        f"its policy leaves the expert's after reading {' '.join(task.alphabet[x] for x in parted.path)}; "
    longest = max(len(i.a) for i in instances if i.name == "exhaustive")
    ties = sum(i.name == "near_tie" for i in instances)
    return Verdict(mutant, "unknown", f"{where}no wrong answer on any of {len(instances):,} instances "
                   f"searched (every {'string' if task.operands == 1 else 'pair'} up to {longest} "
                   f"symbols, {SEARCH_RANDOM} random up to {MAX_SEARCH_DIGITS}"
                   f"{f', {ties} near ties' if ties else ''})")


def mutation_report(task: Task, progress: Callable[[int, int], None] | None = None,
                    workers: int = 1) -> dict:
    """Every mutant of the task's expert judged, in `workers` processes: the counts, the score and
    the survivors. The verdicts do not depend on `workers` (each mutant is judged alone)."""
    check_workers(workers)
    start, children = time.process_time(), _children_cpu()
    found = mutants(task.agent)
    verdicts = []
    for verdict in _judged(task, found, workers):
        verdicts.append(verdict)
        if progress is not None:
            progress(len(verdicts), len(found))
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    killable = counts["killed"] + counts["blind spot"]
    cpu = time.process_time() - start + _children_cpu() - children
    return {"task": task.name, "mutants": len(found), **counts,
            "score": round(counts["killed"] / killable, 4) if killable else 1.0,
            "protocol_digits": list(PROTOCOL_DIGITS), "cpu_seconds": round(cpu, 1), "workers": workers,
            "survivors": [{"mutant": str(v.mutant), "status": v.status, "why": v.detail}
                          for v in verdicts if v.status != "killed"]}


def _judged(task: Task, found: list[Mutant], workers: int) -> Iterator[Verdict]:
    """The verdicts in the order of `found`. Workers are forked where the platform can, so a task
    loaded from a --tasks-file reaches them as it is; elsewhere they look the task up by name."""
    global _worker_task
    if workers == 1:
        search = functools.cache(lambda: search_instances(task))  # built once, by the first survivor
        yield from (judge(task, mutant, search) for mutant in found)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    _worker_task = task
    with multiprocessing.get_context(method).Pool(workers, _start_worker, (task.name,)) as pool:
        yield from pool.imap(_judge_in_worker, found, chunksize=8)


_worker_task: Task | None = None
_worker_search: Callable[[], list[Instance]] | None = None


def _start_worker(task_name: str) -> None:
    global _worker_task, _worker_search
    if _worker_task is None or _worker_task.name != task_name:  # spawned: nothing inherited
        from dfst.tasks import get_task
        _worker_task = get_task(task_name)
    task = _worker_task
    _worker_search = functools.cache(lambda: search_instances(task))


def _judge_in_worker(mutant: Mutant) -> Verdict:
    return judge(_worker_task, mutant, _worker_search)


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the workers), where the OS reports them."""
    try:
        import resource
    except ImportError:  # Windows: the report then counts this process alone
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
