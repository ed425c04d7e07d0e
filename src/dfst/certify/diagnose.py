"""Why a proof failed, how long the DFST should last, and a real instance that tests the prediction.

Region failure: along a cycle of the lockstep graph the radius bound is a linear-fractional map
r -> (a r + b) / (c r + e) per edge, so a pass around the cycle is the product of 2×2 matrices and
p passes its p-th power. The predicted failure is the first p where the bound leaves the margins;
the cycle predicting the earliest failure is reported. Plain-mode norm drift: the scale of h grows
by the product of the edges' scale factors per pass, so float32 overflows after log(limit) / rate
steps; a decay predicts no failure (round-to-nearest stalls it above 0), only when the proof's
assumption max|h| >= 2^-60 is lost. Where a hard instance family pumps the cycle (more passes with more
digits) it is run through the evaluator at half, one and two times the predicted length.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from dfst.automata import Transducer
from dfst.certify.bounded import passes_to_exceed
from dfst.certify.bounds import slack
from dfst.certify.lockstep import HALT, Graph
from dfst.certify.regions import RegionProof
from dfst.certify.search import confirm
from dfst.grid.rollout import DfstWeights, run_table
from dfst.tasks.base import Task

MAX_CYCLES = 300
FLT_MAX_LOG, ASSUMED_MIN_LOG = math.log(3.4028235e38), math.log(2.0 ** -60)


def cycles(graph: Graph) -> list[list[tuple[int, int]]]:
    """The shortest cycle through each node (up to MAX_CYCLES), as lists of (node, symbol) edges."""
    out, seen = [], set()
    succ: dict[int, list[tuple[int, int]]] = {}
    for (n, x), m in graph.edges.items():
        if m != HALT:
            succ.setdefault(n, []).append((x, m))
    for start in range(min(len(graph.nodes), MAX_CYCLES)):
        parent, queue = {}, deque([start])
        while queue and start not in parent:
            n = queue.popleft()
            for x, m in succ.get(n, ()):
                if m not in parent:
                    parent[m] = (n, x)
                    queue.append(m)
        if start in parent:
            path, n = [], start
            while True:
                n, x = parent[n]
                path.append((n, x))
                if n == start:
                    break
            key = frozenset(path)
            if key not in seen:
                seen.add(key)
                out.append(path[::-1])
    return out


def _pass_matrix(proof: RegionProof, index: dict, cycle) -> np.ndarray:
    b, s = proof.bounds, slack(proof.frame)
    total = np.eye(2)
    for edge in cycle:
        e = index[edge]
        step = np.array([[b.a1[e] * (1 + s), b.a0[e] * (1 + s)], [-b.b1[e] * (1 - s), b.b0[e] * (1 - s)]])
        total = step @ total
        total /= np.abs(total).max()
    return total


def diagnose_regions(task: Task, agent: Transducer, weights: DfstWeights, graph: Graph,
                     proof: RegionProof, rescale: bool, pump_max_digits: int) -> dict:
    index = {(int(n), int(x)): e for e, (n, x) in enumerate(zip(proof.bounds.src, proof.bounds.symbol))}
    best = None
    for cycle in cycles(graph):
        M = _pass_matrix(proof, index, cycle)
        limit = min(proof.limits[n] for n, _ in cycle)
        passes = passes_to_exceed(M, limit)
        steps = None if passes is None else passes * len(cycle)
        if best is None or (steps is not None and (best[0] is None or steps < best[0])):
            gain = (M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]) / M[1, 1] ** 2 if M[1, 1] > 0 else math.inf
            best = (steps, cycle, {"gain_per_pass": float(gain), "injection_per_pass":
                                   float(M[0, 1] / M[1, 1]) if M[1, 1] > 0 else math.inf,
                                   "margin_radius": float(limit), "predicted_passes": passes})
    out = {"reason": proof.reason}
    if best is None:
        return out
    steps, cycle, info = best
    out["cycle"] = _describe(graph, agent, cycle) | info | {"predicted_steps": steps}
    out["pumped"] = pump(task, agent, weights, graph, cycle, info["predicted_passes"], rescale,
                         pump_max_digits)
    return out


def diagnose_norm(task: Task, agent: Transducer, weights: DfstWeights, graph: Graph, proof: RegionProof,
                  pump_max_digits: int) -> dict:
    """Plain mode with proven directions: the norm's drift along the cycle that drifts fastest."""
    index = {(int(n), int(x)): e for e, (n, x) in enumerate(zip(proof.bounds.src, proof.bounds.symbol))}
    scale0 = math.log(float(np.abs(weights.h0).max()) or 1.0)
    best = None
    for cycle in cycles(graph):
        rate = sum(math.log(abs(proof.bounds.beta[index[e]])) for e in cycle) / len(cycle)
        if best is None or abs(rate) > abs(best[0]):
            best = (rate, cycle)
    out = {"reason": "directions are proved (the rescaled mode certifies); in plain mode the norm "
                     "of h drifts (a growth overflows float32 at some length; a decay leaves the proof's "
                     "range)"}
    if best is None or best[0] == 0:
        return out | {"cycle": None, "rate_per_step": 0.0}
    rate, cycle = best
    if rate < 0:
        # No failure length for a decay: float32 round-to-nearest stalls it a few subnormal units
        # above 0 (m (1 - eps) rounds back to m once m eps < 1/2), so h need never vanish. Only the
        # proof's assumption max|h| >= 2^-60 is lost, after `assumption_lost_steps`.
        lost = math.ceil((scale0 - ASSUMED_MIN_LOG) / -rate)
        out["cycle"] = _describe(graph, agent, cycle) | {
            "rate_per_step": rate, "predicted_steps": None, "predicted_passes": None, "kind": "decay",
            "assumption_lost_steps": max(lost, 0)}
        return out
    steps = math.ceil((FLT_MAX_LOG - scale0) / rate)
    passes = math.ceil(steps / len(cycle))
    out["cycle"] = _describe(graph, agent, cycle) | {"rate_per_step": rate, "predicted_steps": steps,
                                                     "predicted_passes": passes, "kind": "overflow"}
    out["pumped"] = pump(task, agent, weights, graph, cycle, passes, False, pump_max_digits)
    return out


def _describe(graph: Graph, agent: Transducer, cycle) -> dict:
    return {"states": [agent.states[graph.nodes[n].q] for n, _ in cycle],
            "symbols": [agent.alphabet[x] for _, x in cycle], "length": len(cycle)}


def _expert_word(task: Task, agent: Transducer, instance) -> list[tuple[int, int]]:
    nxt, _, _ = agent.tables()
    run = run_table(agent, task.layout(instance), task.max_steps(instance), record=True)
    q, word = agent.states.index(agent.initial), []
    for x in run.trace[:, 0]:
        word.append((q, int(x)))
        q = int(nxt[q, x])
    return word


def _max_repeats(word: list, cycle: list) -> int:
    best, L = 0, len(cycle)
    for i in range(len(word)):
        reps = 0
        while word[i + reps * L: i + (reps + 1) * L] == cycle:
            reps += 1
        best = max(best, reps)
    return best


def pump(task: Task, agent: Transducer, weights: DfstWeights, graph: Graph, cycle, passes: int | None,
         rescale: bool, max_digits: int) -> dict | None:
    """A hard-instance family that repeats the cycle, run at 1/2, 1 and 2 times the predicted length."""
    if passes is None:
        return None
    word = [(graph.nodes[n].q, x) for n, x in cycle]
    rotations = [word[i:] + word[:i] for i in range(len(word))]
    best = None
    for inst16, inst32 in zip(task.hard_instances(16), task.hard_instances(32)):
        counts = [max(_max_repeats(_expert_word(task, agent, i), r) for r in rotations)
                  for i in (inst16, inst32)]
        per_digit = (counts[1] - counts[0]) / 16
        if per_digit > 0 and (best is None or per_digit > best[0]):
            best = (per_digit, inst16.name)
    if best is None:
        return {"family": None}
    digits = max(1, math.ceil(passes / best[0]))
    runs = []
    for n in sorted({max(1, digits // 2), digits, 2 * digits}):
        if n > max_digits:
            runs.append({"digits": n, "skipped": f"above {max_digits} digits"})
            continue
        [inst] = [i for i in task.hard_instances(n) if i.name == best[1]] or [None]
        if inst is not None:
            result = confirm(task, weights, inst, rescale)
            runs.append({"digits": n, "exact": result.exact, "verdict": result.verdict})
    return {"family": best[1], "passes_per_digit": best[0], "predicted_digits": digits, "runs": runs}
