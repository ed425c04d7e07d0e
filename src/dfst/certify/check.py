"""Independent checker of a saved certificate: yes, or the first condition that fails.

A separate code path from the prover: its own float32 step (numpy, sums in index order, zero
entries of h skipped, first-maximum argmax), its own structure checks, and, for region and bounded
certificates, a direct re-evaluation of the edge, margin and growth inequalities
(`check_regions.py`).
"""

from __future__ import annotations

import numpy as np

from dfst.automata import STOP, transducer_from_dict
from dfst.certify.check_grid import check_grid
from dfst.certify.check_regions import check_bounded, check_regions


def step32(A, B, C, h, x):
    """The engine's float32 step: (next h, symbol scores, move scores)."""
    out = [np.zeros(W.shape[1], np.float32) for W in (A, B, C)]
    for j in range(h.shape[0]):
        if h[j] != 0:
            for o, W in zip(out, (A, B, C)):
                o += W[x][:, j] * h[j]
    return out


def check_certificate(cert: dict, A, B, C, h0, agent=None) -> tuple[bool, str]:
    """(True, 'ok') if the certificate proves the DFST (A, B, C, h0) equals the agent, else (False, why)."""
    agent = agent or transducer_from_dict(cert["agent"])
    if transducer_from_dict(cert["agent"]).to_dict() != agent.to_dict():
        return False, "the certificate is about another agent"
    sym = {s: i for i, s in enumerate(agent.alphabet)}
    nxt, wrt, mov = agent.tables()
    nodes = [(agent.states.index(n["state"]), np.array(n["h"], np.float32)) for n in cert["nodes"]]
    if nodes[0][0] != agent.states.index(agent.initial) or not np.array_equal(nodes[0][1], h0):
        return False, "node 0 is not (initial state, h0)"
    edges = {(n, sym[x]): m for n, x, m in cert["edges"]}
    # grid certificates list the edges where the weights part from the expert: no grid run reads them
    wrong = {(int(n), sym[x]) for n, x in cert.get("departures", [])} if cert["kind"] == "grid" else set()
    for n, (q, h) in enumerate(nodes):
        if {x for (m, x) in edges if m == n} != set(np.flatnonzero(mov[q] >= 0).tolist()):
            return False, f"node {n}: edges do not cover the expert's rules in {agent.states[q]}"
        for x in np.flatnonzero(mov[q] >= 0):
            h1, s, mv = step32(A, B, C, h, x)
            departs = (n, int(x)) in wrong  # must be exactly the edges whose readout is not the expert's
            if ((int(np.argmax(s)), int(np.argmax(mv))) != (wrt[q, x], mov[q, x])) != departs:
                return False, f"node {n} reading {agent.alphabet[x]}: wrong readout"
            if departs:
                continue
            m = edges[(n, int(x))]
            if mov[q, x] == STOP:
                continue
            if m < 0 or nodes[m][0] != nxt[q, x]:
                return False, f"node {n} reading {agent.alphabet[x]}: successor state mismatch"
            if cert["kind"] in ("exact", "grid"):
                if cert["mode"] == "rescaled" and np.abs(h1).max() > 0:
                    h1 = h1 / np.abs(h1).max()
                if not np.array_equal(h1, nodes[m][1]):
                    return False, f"node {n} reading {agent.alphabet[x]}: successor vector differs"
    if cert["kind"] == "regions":
        return check_regions(cert, nodes, edges, A, B, C, agent)
    if cert["kind"] == "bounded":
        return check_bounded(cert, nodes, edges, A, B, C, agent, _step_bound(cert))
    if cert["kind"] == "exact":
        return True, "ok"
    if cert["kind"] == "grid":
        return check_grid(cert, nodes, edges, wrong, agent)
    return False, f"unknown certificate kind {cert['kind']!r}"


def _step_bound(cert: dict):
    """The expert's step bound on two N-digit operands of the certificate's task."""
    from dfst.tasks import get_task

    task = get_task(cert["task"])
    return lambda n: task.step_bound(n, n, task.base)
