"""Independent checker of a saved certificate: yes, or the first condition that fails.

A separate code path from the prover: its own float32 step (numpy, sums in index order, zero
entries of h skipped, first-maximum argmax), its own structure checks, and, for region
certificates, a direct re-evaluation of the edge and margin inequalities at the saved radii.
"""

from __future__ import annotations

import numpy as np

from dfst.automata import STOP, transducer_from_dict


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
    for n, (q, h) in enumerate(nodes):
        if {x for (m, x) in edges if m == n} != set(np.flatnonzero(mov[q] >= 0).tolist()):
            return False, f"node {n}: edges do not cover the expert's rules in {agent.states[q]}"
        for x in np.flatnonzero(mov[q] >= 0):
            h1, s, mv = step32(A, B, C, h, x)
            if (int(np.argmax(s)), int(np.argmax(mv))) != (wrt[q, x], mov[q, x]):
                return False, f"node {n} reading {agent.alphabet[x]}: wrong readout"
            m = edges[(n, int(x))]
            if mov[q, x] == STOP:
                continue
            if m < 0 or nodes[m][0] != nxt[q, x]:
                return False, f"node {n} reading {agent.alphabet[x]}: successor state mismatch"
            if cert["kind"] == "exact":
                if cert["mode"] == "rescaled" and np.abs(h1).max() > 0:
                    h1 = h1 / np.abs(h1).max()
                if not np.array_equal(h1, nodes[m][1]):
                    return False, f"node {n} reading {agent.alphabet[x]}: successor vector differs"
    if cert["kind"] == "regions":
        return _check_regions(cert, nodes, edges, A, B, C, agent)
    return True, "ok"


def _check_regions(cert, nodes, edges, A, B, C, agent) -> tuple[bool, str]:
    if cert["mode"] != "rescaled":
        return False, "a region certificate covers the rescaled mode only"
    T = np.array(cert["T"])
    Ti, r, s, d = np.linalg.inv(T), np.array(cert["radii"]), cert["slack"], T.shape[0]
    g = (d + 1) * cert["unit_roundoff"] / (1 - (d + 1) * cert["unit_roundoff"])
    c = np.array([h / np.abs(h).max() for _, h in nodes], dtype=np.float64) @ Ti.T
    piv = np.abs(c).argmax(axis=1)
    tmax = np.abs(T).max(axis=1)

    def P(n):
        M = np.eye(d) - np.outer(c[n], np.eye(d)[piv[n]] / c[n][piv[n]])
        M[piv[n]] = 0
        return M

    for (n, x), m in edges.items():
        q = nodes[n][0]
        hb = np.abs(T @ c[n]) + r[n] * tmax
        eta = d * cert["underflow"] * hb.max()
        for W, want in ((B[x], agent.tables()[1][q, x]), (C[x], agent.tables()[2][q, x])):
            W = W.astype(np.float64)
            for j in range(W.shape[0]):
                diff = (W[want] - W[j]) @ T
                worst = diff @ c[n] * (1 - s) - np.abs(diff @ P(n)).max() * r[n] \
                    - g * (np.abs(W[want]) + np.abs(W[j])) @ hb - 2 * eta
                if j != want and worst <= 0:
                    return False, f"node {n} reading {agent.alphabet[x]}: margin {worst:.3g}"
        if m < 0:
            continue
        M = Ti @ A[x].astype(np.float64) @ T
        absA = np.abs(A[x].astype(np.float64))
        xi = np.abs(Ti) @ (g * absA @ hb + eta * (absA @ hb > 0))
        i, v = piv[m], M @ c[n]
        gain = np.abs(P(m) @ M @ P(n)).sum(axis=0).max()
        num = np.abs(P(m) @ v).sum() + gain * r[n] + (np.abs(P(m)) @ xi).sum()
        den = v[i] / c[m][i] - np.abs((M @ P(n))[i]).max() * r[n] / abs(c[m][i]) - xi[i] / abs(c[m][i])
        if den <= 0 or num * (1 + s) > r[m] * den * (1 - s):
            return False, f"edge {n} -{agent.alphabet[x]}-> {m}: image radius exceeds {r[m]:.3g}"
    return True, "ok"
