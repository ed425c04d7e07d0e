"""RPNI: passive automaton learning (AALpy) on the DFST's own PTOs, scored closed loop like a DFST.

A PTO is what the DFST trains on: per step the symbol read, the symbol written and the move. RPNI
learns a Mealy machine from it by merging the states of the prefix-tree acceptor while the data
allow it (`dfst.extract`'s `rpni` method, the model unused). The automaton is compiled to one-hot
DFST weights and run by the evaluator on the grid, so RPNI is measured exactly as `dfst eval`
measures a DFST.

"How many PTOs does RPNI need": one run climbs a ladder of sample counts (nested datasets: with one
seed the first n samples of a larger set are the n-sample set) and stops at the first count whose
automaton is robust at `search_digits`; that count is the result's `samples`. Seeds give the spread.
Samplers: "uniform" (`dfst.data.record_dataset`, the DFST's default) or "cover"
(`dfst.data.coverage.cover_instances`: a greedy rule cover first, then uniform pairs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np

from dfst.automata import Transducer
from dfst.baselines.common import hardware, max_passing
from dfst.data import SAMPLERS
from dfst.errors import DfstError
from dfst.extract import extract
from dfst.extract.rpni import LEARNERS
from dfst.grid.rollout import DfstWeights
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.protocol.instances import HeldOut
from dfst.results import Result
from dfst.tasks.base import Task

DEFAULTS: dict = {
    "samples": 0,                      # > 0: learn from exactly this many PTOs, no search
    "ladder": "5,10,20,40,80,160,320,640,1280,2560,5120",  # counts tried in turn when samples == 0
    "bisect": True,                    # then bisect between the last failing and first robust count
    "max_digits": 3,                   # operand lengths in the training PTOs (as the DFST's data)
    "sampler": "uniform",              # one of dfst.data.SAMPLERS: uniform, contexts, cover, pairs
    "learner": "rpni",                 # or "edsm" (`dfst baseline edsm`)
    "search_digits": 1000,             # a count is enough when its automaton is robust here
    "eval_digits": "10,100,1000,10000,100000",
    "random": 10,                      # random pairs per length, as dfst eval
}


def record_traces(task: Task, samples: int, max_digits: int, seed: int, sampler: str) -> list[np.ndarray]:
    """The expert's PTOs chosen by one of the DFST's samplers (`dfst.data.SAMPLERS`: contexts sees
    only PTOs; cover and pairs read the expert's states), one (T, 3) array per sample."""
    return traces_and_pairs(task, samples, max_digits, seed, sampler)[0]


def traces_and_pairs(task: Task, samples: int, max_digits: int, seed: int,
                     sampler: str) -> tuple[list[np.ndarray], set[tuple[str, str]]]:
    """`record_traces`, and the operand pairs of those PTOs (never scored)."""
    if sampler not in SAMPLERS:
        raise DfstError(f"unknown sampler {sampler!r} (known: {', '.join(SAMPLERS)})")
    ds = SAMPLERS[sampler](task, samples, max_digits, seed)
    return [ds.trace(i) for i in range(ds.samples)], {(a, b) for a, b in ds.operands}


def evaluate_agent(task: Task, agent: Transducer, digits: tuple[int, ...], random: int,
                   trained_on: Iterable[tuple[str, str]] = ()) -> dict:
    """Compile the agent and run the DFST protocol on its weights (as `dfst eval`), one length at a
    time from the shortest, stopping after the first length that is not robust; never on a pair of
    `trained_on` (the operands of the PTOs it was learned from)."""
    from dfst.model.compile import compile_agent

    weights = DfstWeights.of(*compile_agent(agent, task=task.name).numpy_weights())
    return evaluate_weights(task, weights, digits, random, trained_on)


def evaluate_weights(task: Task, weights: DfstWeights, digits: tuple[int, ...], random: int,
                     trained_on: Iterable[tuple[str, str]] = ()) -> dict:
    """`evaluate_agent` for DFST weights: the protocol one length at a time, stopping after the first
    that is not robust, never on a pair of `trained_on`."""
    levels: list[dict] = []
    held_out = HeldOut(trained_on)  # once: `trained_on` may be an iterator; its counts are per length
    for n in sorted(set(digits)):
        report, _ = run_protocol(task, weights, EvalConfig(digits=(n,), random=random), held_out=held_out)
        levels += report["levels"]
        if not levels[-1]["robust"]:
            break
    return {"robust_max_digits": max_passing(levels, "robust"),
            "probabilistic_max_digits": max_passing(levels, "probabilistic"), "levels": levels}


def learn(task: Task, samples: int, config: dict, seed: int) -> tuple[Transducer, int, set[tuple[str, str]]]:
    """The automaton RPNI learns from `samples` PTOs (`dfst.extract`'s rpni method), the number of
    steps they hold, and their operand pairs."""
    traces, pairs = traces_and_pairs(task, samples, config["max_digits"], seed, config["sampler"])
    learner = config["learner"]
    found = extract(None, traces, learner, agent=task.agent, name=f"{learner}-{task.name}")
    return found.agent, sum(len(t) for t in traces), pairs


def try_count(task: Task, count: int, config: dict, seed: int) -> dict:
    """Learn from `count` PTOs and say whether the automaton is robust at search_digits."""
    agent, steps, pairs = learn(task, count, config, seed)
    report = evaluate_agent(task, agent, (config["search_digits"],), config["random"], pairs)
    return {"samples": count, "steps": steps, "states": agent.d, "rules": len(agent.rules),
            "robust": report["robust_max_digits"] >= config["search_digits"]}


def search_samples(task: Task, config: dict, seed: int,
                   on_count: Callable[[int], None] | None = None) -> tuple[int | None, list[dict]]:
    """The smallest sample count found whose automaton is robust at search_digits (None if none on
    the ladder), and every count tried. Climbs the ladder, then (with bisect) bisects between the
    last failing count and the first robust one; robustness need not be monotone in the count, so
    this is the smallest count found, not a proven minimum."""
    tried, low = [], 0
    for count in _ints(config["ladder"], "ladder"):
        if on_count is not None:
            on_count(count)
        tried.append(try_count(task, count, config, seed))
        if tried[-1]["robust"]:
            break
        low = count
    else:
        return None, tried
    high = tried[-1]["samples"]
    while config["bisect"] and high - low > 1:
        mid = (low + high) // 2
        if on_count is not None:
            on_count(mid)
        tried.append(try_count(task, mid, config, seed))
        low, high = (low, mid) if tried[-1]["robust"] else (mid, high)
    return high, tried


def run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    config = {**DEFAULTS, **config}
    if config["sampler"] not in SAMPLERS:
        raise DfstError(f"unknown sampler {config['sampler']!r} (known: {', '.join(SAMPLERS)})")
    if config["learner"] not in LEARNERS:
        raise DfstError(f"unknown learner {config['learner']!r} (known: {', '.join(LEARNERS)})")
    start = time.perf_counter()
    tried, needed = [], None
    if config["samples"] > 0:
        count = config["samples"]
    else:
        needed, tried = search_samples(task, config, seed, _reporter(progress, task))
        count = needed or tried[-1]["samples"]
    agent, steps, pairs = learn(task, count, config, seed)
    seconds = time.perf_counter() - start
    report = evaluate_agent(task, agent, _ints(config["eval_digits"], "eval_digits"), config["random"], pairs)
    notes = f"{count} PTOs (<= {config['max_digits']} digits, {config['sampler']} sampler)"
    if tried:
        notes += (f"; the fewest found robust at {config['search_digits']} digits" if needed else
                  f"; no count on the ladder was robust at {config['search_digits']} digits")
    return Result(
        system=system_name(config),
        task=task.name, seed=seed, samples=None if tried and needed is None else count, params=0,
        max_train_digits=config["max_digits"], robust_lg=report["robust_max_digits"],
        probabilistic_lg=report["probabilistic_max_digits"], train_seconds=round(seconds, 3),
        hardware=hardware(), levels=report["levels"], config=config, notes=notes,
        details={"states": agent.d, "rules": len(agent.rules), "steps": steps,
                 "expert_states": task.agent.d, "expert_rules": len(task.agent.rules),
                 "samples_needed": needed, "search": tried, "agent": agent.to_dict(),
                 # the ladder's top, where no count was robust: never a sample count (the table's
                 # "not reached (up to N)")
                 **({"samples_cap": count} if tried and needed is None else {})})


def system_name(config: dict) -> str:
    """"RPNI" or "EDSM", with the sampler named where it is not the uniform one."""
    learner = config["learner"].upper()
    return learner if config["sampler"] == "uniform" else f"{learner} ({config['sampler']} sampler)"


def _reporter(progress: bool, task: Task) -> Callable[[int], None] | None:
    if not progress:
        return None
    from rich.console import Console

    console = Console(stderr=True)
    return lambda count: console.print(f"{task.name}: learning from {count} PTOs")


def _ints(text: str, key: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise DfstError(f"config {key}={text!r} is not a comma-separated list of integers") from None
    if not values or min(values) < 1:
        raise DfstError(f"config {key}={text!r} needs integers >= 1")
    return values
