"""Lockstep exploration: the DFST's hidden states reachable in step with the expert.

From (q0, h0), follow every symbol x for which the expert has a rule in state q: the DFST must write
the expert's symbol and make its move (checked with the engine's float32 arithmetic), then the pair
moves to (delta(q, x), h'). While both agree the grids are identical, so the symbol read next is the
one the expert reads: these paths are all the DFST can meet on any input of any length.

A new pair joins an existing node of the same expert state when their directions h / max|h| are
within `tol` in the max norm (tol = 0: the same direction exactly). Breadth-first order makes the
first disagreement found a shortest one. `exact` says every edge landed on its node's float32
vector bit for bit: then the finite graph is itself a complete proof for that arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dfst.automata import HALT_TARGET as HALT
from dfst.automata import STOP, Transducer
from dfst.grid.rollout import DfstWeights, direction, engine_step


@dataclass(frozen=True)
class Node:
    q: int  # expert state index
    h: np.ndarray  # float32 representative: the engine's vector on the first path that reached it
    path: tuple[int, ...]  # symbols read from the start to reach it (shortest)


@dataclass
class Graph:
    nodes: list[Node]
    edges: dict[tuple[int, int], int] = field(default_factory=dict)  # (node, symbol) -> node or HALT
    outputs: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # the DFST's (write, move)
    exact: bool = True


@dataclass(frozen=True)
class Disagreement:
    """The DFST leaves the expert on the last symbol of `path` (a shortest such symbol sequence)."""

    path: tuple[int, ...]
    states: tuple[int, ...]  # expert state before each symbol of path
    expected: tuple[int, int]  # (write, move) of the expert
    got: tuple[int, int] | None  # the DFST's (write, move); None when h became non-finite


class TooManyNodes(Exception):
    """The exploration passed its node budget (directions do not close at this tolerance)."""


def explore(weights: DfstWeights, agent: Transducer, *, rescale: bool, tol: float = 0.0,
            max_nodes: int = 20000, stop: bool = True) -> Graph | Disagreement:
    """The lockstep graph, or the first disagreement. With stop=False a disagreement is recorded in
    `outputs` and the walk goes on in the expert's state (used by extraction); where the expert halts
    and the DFST does not, the edge goes to HALT and the DFST's move stays in `outputs`."""
    nxt, wrt, mov = agent.tables()
    graph = Graph([Node(agent.states.index(agent.initial), weights.h0.copy(), ())])
    index = _NodeIndex(tol)
    index.add(graph.nodes[0], 0)
    frontier = 0
    while frontier < len(graph.nodes):
        n, node = frontier, graph.nodes[frontier]
        frontier += 1
        for x in np.flatnonzero(mov[node.q] >= 0):
            x = int(x)
            step = engine_step(weights, node.h, x, rescale)
            want = (int(wrt[node.q, x]), int(mov[node.q, x]))
            graph.outputs[(n, x)] = (step.write, step.move)
            bad = (step.write, step.move) != want or (step.h is None and want[1] != STOP)
            if bad and stop:
                got = None if step.h is None and (step.write, step.move) == want else (step.write, step.move)
                return _disagreement(graph, node, x, want, got, agent)
            if want[1] == STOP or step.move == STOP or step.h is None:
                graph.edges[(n, x)] = HALT
                continue
            target = Node(int(nxt[node.q, x]), step.h, (*node.path, x))
            m = index.find(target)
            if m is None:
                if len(graph.nodes) >= max_nodes:
                    raise TooManyNodes(f"more than {max_nodes} lockstep nodes at tol {tol}")
                m = len(graph.nodes)
                graph.nodes.append(target)
                index.add(target, m)
            elif not np.array_equal(graph.nodes[m].h, step.h):
                graph.exact = False
            graph.edges[(n, x)] = m
    return graph


def _disagreement(graph: Graph, node: Node, x: int, want, got, agent: Transducer) -> Disagreement:
    nxt, _, _ = agent.tables()
    states, q = [], agent.states.index(agent.initial)
    for symbol in node.path:
        states.append(q)
        q = int(nxt[q, symbol])
    return Disagreement((*node.path, x), (*states, node.q), want, got)


class _NodeIndex:
    """Nodes by expert state and direction: exact lookup, or nearest within tol (max norm)."""

    def __init__(self, tol: float):
        self.tol = tol
        self.exact: dict[tuple[int, bytes], int] = {}
        self.by_state: dict[int, tuple[list[np.ndarray], list[int]]] = {}

    def add(self, node: Node, n: int) -> None:
        u = direction(node.h)
        self.exact[(node.q, u.tobytes())] = n
        dirs, ids = self.by_state.setdefault(node.q, ([], []))
        dirs.append(u)
        ids.append(n)

    def find(self, node: Node) -> int | None:
        u = direction(node.h)
        hit = self.exact.get((node.q, u.tobytes()))
        if hit is not None or self.tol <= 0 or node.q not in self.by_state:
            return hit
        dirs, ids = self.by_state[node.q]
        dist = np.abs(np.asarray(dirs) - u).max(axis=1)
        best = int(np.argmin(dist))
        return ids[best] if dist[best] <= self.tol else None
