"""`certify`: prove that a DFST equals the expert on every input of every length, or show it does not.

1. Lockstep exploration with the engine's float32 arithmetic (tol = 0). A disagreement that no grid
   run reaches (`gridreach.py`: an abstract interpretation of the grid proves every departure of the
   exact lockstep graph unreachable) is no disagreement: CERTIFIED (kind "grid"). Otherwise it is a
   COUNTEREXAMPLE only with a concrete instance whose closed-loop run, from the task's layout, parts
   from the expert's (one reading the shortest symbol path, or any instance searched), reported as
   that run shows it; with none, INCONCLUSIVE (the symbol path may be one no grid draws).
   A finite graph whose edges land on their nodes' vectors bit for bit is a complete proof for that
   arithmetic: CERTIFIED (kind "exact").
2. Otherwise clustered exploration (growing tol) and the region proof (`regions.py`). A proof over
   directions is CERTIFIED in rescaled mode, where the engine keeps only the direction of h. In
   plain mode the norm of h still drifts (overflow or underflow at some length): the proof there is
   bounded by the steps for which the scale provably stays in float32's range.
3. Where no proof holds for every length, the same bounds give one for a number of steps
   (`bounded.py`): CERTIFIED with `max_digits` N, every instance of at most N digits exact (kind
   "bounded"), the diagnosis of why not every length alongside.
4. INCONCLUSIVE otherwise, with the diagnosis of `diagnose.py`.
"""

from __future__ import annotations

import time

from dfst.automata import Transducer
from dfst.certify.bounded import BoundedProof, digits_within, prove_bounded
from dfst.certify.bounds import slack
from dfst.certify.certificate import (
    bounded_certificate,
    exact_certificate,
    grid_certificate,
    region_certificate,
)
from dfst.certify.diagnose import diagnose_norm, diagnose_regions
from dfst.certify.gridproof import prove_unreachable
from dfst.certify.lockstep import Disagreement, Graph, TooManyNodes, explore
from dfst.certify.regions import RegionProof, prove_regions
from dfst.certify.result import Result, counterexample_report, departure_record
from dfst.certify.search import MAX_PAIRS
from dfst.grid.rollout import DfstWeights
from dfst.tasks.base import Task

TOLERANCES = (1e-6, 1e-4, 1e-3, 1e-2)  # clustering radii tried after the exact exploration
MAX_NODES = 20000


def certify(weights: DfstWeights, task: Task, *, agent: Transducer | None = None, rescale: bool = False,
            max_nodes: int = MAX_NODES, pump_max_digits: int = 100_000) -> Result:
    """The verdict (CERTIFIED, COUNTEREXAMPLE or INCONCLUSIVE) for one float mode of the engine."""
    agent = agent or task.agent
    start = time.perf_counter()
    mode = "rescaled" if rescale else "plain"
    found = _explore(weights, agent, rescale, 0.0, max_nodes)
    if isinstance(found, Disagreement):
        return _departure(task, agent, weights, found, rescale, mode, start)
    if isinstance(found, Graph) and found.exact:
        return Result("CERTIFIED", mode, _elapsed(start), graph=found,
                      certificate=exact_certificate(found, weights, agent, mode))
    best: tuple[Graph, RegionProof] | None = None
    longest: tuple[Graph, RegionProof, BoundedProof] | None = None
    for tol in ((0.0,) if isinstance(found, Graph) else ()) + TOLERANCES:
        graph = found if tol == 0.0 else _explore(weights, agent, rescale, tol, max_nodes)
        if isinstance(graph, Disagreement):
            return _departure(task, agent, weights, graph, rescale, mode, start)
        if graph is None:
            continue
        proof = prove_regions(graph, weights, agent.tables())
        if proof.ok and rescale:
            return Result("CERTIFIED", mode, _elapsed(start), graph=graph,
                          certificate=region_certificate(graph, proof, weights, agent, mode))
        fixed = proof.radii if proof.ok else None  # plain mode, directions proved: only the norm bounds
        bounded = prove_bounded(proof.frame, proof.bounds, proof.limits, slack(proof.frame),
                                plain=not rescale, weights=weights, fixed_caps=fixed)
        if bounded is not None and (longest is None or bounded.steps > longest[2].steps):
            longest = (graph, proof, bounded)
        if proof.ok:  # plain mode: the directions hold for ever, the norm of h only for a while
            best = (graph, proof)
            break
        best = best or (graph, proof)
    if best is None:
        return Result("INCONCLUSIVE", mode, _elapsed(start),
                      diagnosis={"reason": f"the directions do not close within {max_nodes} nodes"})
    graph, proof = best
    if proof.ok:
        diagnosis = diagnose_norm(task, agent, weights, graph, proof, pump_max_digits)
    else:
        diagnosis = diagnose_regions(task, agent, weights, graph, proof, rescale, pump_max_digits)
    digits = digits_within(task, longest[2].steps) if longest is not None else 0
    if digits < 1:
        return Result("INCONCLUSIVE", mode, _elapsed(start), graph=graph, diagnosis=diagnosis)
    graph, proof, bounded = longest
    cert = bounded_certificate(graph, proof, bounded, weights, agent, mode, task.name, digits)
    return Result("CERTIFIED", mode, _elapsed(start), graph=graph, certificate=cert, diagnosis=diagnosis,
                  max_digits=digits, max_steps=bounded.steps)


def _departure(task, agent, weights, found: Disagreement, rescale: bool, mode: str, start: float) -> Result:
    """COUNTEREXAMPLE only with a concrete instance on whose closed-loop run, from the task's own
    layout, the DFST parts from the expert (`counterexample_report`: the departure that run shows);
    INCONCLUSIVE when no instance searched shows one: a departure at a start no layout was found to
    reach is no counterexample, and it is not proved unreachable either."""
    proved = prove_unreachable(weights, agent, task, rescale)
    if not isinstance(proved, str):
        graph, reach = proved
        return Result("CERTIFIED", mode, _elapsed(start), graph=graph,
                      certificate=grid_certificate(graph, reach, weights, agent, mode, task.name))
    report = counterexample_report(task, agent, weights, found, rescale)
    if report is not None:
        return Result("COUNTEREXAMPLE", mode, _elapsed(start), counterexample=report)
    departure = departure_record(agent, found)
    reason = (f"no counterexample: no instance searched shows the lockstep's departure, reading "
              f"{departure['path']} from the start, a start no layout searched reaches ({MAX_PAIRS:,} "
              f"small instances and the hard ones; on none does the closed-loop run part from the "
              f"expert's); it may be unreachable, or need a longer instance; not proved unreachable on "
              f"the grid: {proved}")
    return Result("INCONCLUSIVE", mode, _elapsed(start), diagnosis={"reason": reason, "departure": departure})


def _explore(weights, agent, rescale, tol, max_nodes) -> Graph | Disagreement | None:
    try:
        return explore(weights, agent, rescale=rescale, tol=tol, max_nodes=max_nodes)
    except TooManyNodes:
        return None


def _elapsed(start: float) -> float:
    return round(time.perf_counter() - start, 4)
