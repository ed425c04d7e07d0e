"""The `merge` method (the default): the clusters of a DFST's states merged nearest-first while the
PTOs allow it.

A trained DFST often represents one expert state by several nearby hidden vectors (its states
drift a little on every pass of a loop), and clustering then reads off more states than the expert
has: the automaton counts passes instead of looping. Here the clusters are merged in the order of
the distance between their centres (the DFST's own geometry), each merge followed by the fold of
RPNI (Oncina & Garcia 1992): merging two states merges their successors on every shared symbol,
recursively, and the merge is rejected if two merged states then show different actions (written
symbol, move) for one read symbol. Before any merge, a cluster whose points step on one symbol
into several clusters has those successors folded together (the clustering cut one drifting state
in two); only two different actions on one (cluster, symbol) pair make a radius unusable. Only the
training PTOs are used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.extract.cluster import cluster, read_rules, transducer_from_rules
from dfst.extract.result import HALT, STOP, Extraction
from dfst.model import teacher_forced_points

# A partial Mealy machine over clusters: (cluster, symbol) -> (next cluster or HALT, write, move)
Edges = dict[tuple[int, int], tuple[int, int, int]]


class _Partition:
    """Union-find over clusters with the merged transition table of each block."""

    def __init__(self, n: int, edges: Edges):
        self.parent = list(range(n))
        self.table: dict[int, dict[int, tuple[int, int, int]]] = {c: {} for c in range(n)}
        for (c, x), out in edges.items():
            self.table[c][x] = out

    def find(self, c: int) -> int:
        while self.parent[c] != c:
            self.parent[c] = self.parent[self.parent[c]]
            c = self.parent[c]
        return c

    def clash(self, a: int, b: int) -> bool:
        """Blocks a and b act differently on a shared symbol: no merge can hold (cheap pre-check)."""
        ta, tb = self.table[a], self.table[b]
        return any(x in ta and (ta[x][1:] != out[1:] or (ta[x][0] == HALT) != (out[0] == HALT))
                   for x, out in tb.items())

    def copy(self) -> _Partition:
        other = _Partition.__new__(_Partition)
        other.parent = list(self.parent)
        other.table = {c: dict(t) for c, t in self.table.items()}
        return other

    def merge(self, a: int, b: int) -> bool:
        """Merge the blocks of a and b and fold; False on a conflict (the partition is then spoiled)."""
        pending = [(a, b)]
        while pending:
            a, b = (self.find(c) for c in pending.pop())
            if a == b:
                continue
            if a > b:
                a, b = b, a
            self.parent[b] = a
            for x, (nxt_b, w_b, m_b) in self.table.pop(b).items():
                if x not in self.table[a]:
                    self.table[a][x] = (nxt_b, w_b, m_b)
                    continue
                nxt_a, w_a, m_a = self.table[a][x]
                if (w_a, m_a) != (w_b, m_b) or (nxt_a == HALT) != (nxt_b == HALT):
                    return False
                if nxt_a != HALT:
                    pending.append((nxt_a, nxt_b))
        return True


def merge_clusters(edges: Edges, centres: np.ndarray) -> np.ndarray:
    """A block label per cluster after merging compatible clusters, nearest centres first.

    `edges` must be conflict-free (`transitions`)."""
    return _merge_nearest(_Partition(len(centres), edges), centres)


def _merge_nearest(part: _Partition, centres: np.ndarray) -> np.ndarray:
    """A block label per cluster after merging compatible blocks of `part`, nearest centres first.

    Pairs of clusters are tried in increasing max-norm distance of their centres; a rejected merge
    leaves the partition as it was.
    """
    n = len(centres)
    gaps = np.zeros((n, n))  # max-norm distances, one coordinate at a time: n² memory, not n²·d
    for column in centres.T:
        np.maximum(gaps, np.abs(column[:, None] - column[None, :]), out=gaps)
    order = sorted((gaps[i, j], i, j) for i in range(n) for j in range(i + 1, n))
    for _, i, j in order:
        a, b = part.find(i), part.find(j)
        if a == b or part.clash(a, b):
            continue
        trial = part.copy()
        if trial.merge(i, j):
            part = trial
    roots = sorted({part.find(c) for c in range(n)})
    index = {r: k for k, r in enumerate(roots)}
    return np.array([index[part.find(c)] for c in range(n)], dtype=np.int64)


def folded_partition(n: int, labels: np.ndarray, steps) -> _Partition | None:
    """The clusters as a deterministic partial machine: where one (cluster, symbol) pair shows two
    successors with the same action, the successors are merged (RPNI's fold). None if a pair shows
    two actions, which no merge can repair.

    Greedy leader clustering cuts a drifting state's cloud of points at arbitrary borders, so
    neighbouring points of one cluster often step into two clusters: folding joins them instead of
    discarding the radius.
    """
    outcomes: dict[tuple[int, int], set[tuple[int, int, int]]] = {}
    for i, x, w, m, j in steps:
        nxt = HALT if m == STOP else int(labels[j])
        outcomes.setdefault((int(labels[i]), x), set()).add((nxt, w, m))
    edges: Edges = {}
    pending = []
    for key, outs in outcomes.items():
        first, *rest = sorted(outs)
        edges[key] = first
        pending += [(first, other) for other in rest]
    part = _Partition(n, edges)
    for (nxt_a, w_a, m_a), (nxt_b, w_b, m_b) in pending:
        if (w_a, m_a) != (w_b, m_b) or (nxt_a == HALT) != (nxt_b == HALT):
            return None
        if not part.merge(nxt_a, nxt_b):
            return None
    return part


def transitions(labels: np.ndarray, steps) -> tuple[Edges, int]:
    """The edges the labelled PTO steps show, and how many (cluster, symbol) pairs show two outcomes."""
    edges: Edges = {}
    conflicts: set[tuple[int, int]] = set()
    for i, x, w, m, j in steps:
        key, out = (int(labels[i]), x), (HALT if m == STOP else int(labels[j]), w, m)
        if edges.setdefault(key, out) != out:
            conflicts.add(key)
    return edges, len(conflicts)


# Nearest-first merging tries every pair of clusters: past this many a radius is skipped (mult10's
# finest radius gave 11,286 clusters; a coarser radius reads the automaton).
MAX_MERGE_CLUSTERS = 2000


def merged_labels(points: np.ndarray, steps, radius: float) -> tuple[np.ndarray, int] | None:
    """Cluster at `radius`, fold, then merge nearest-first: a block label per point and the number of
    clusters before merging; None if the clusters show two actions for one (cluster, symbol) pair,
    or if there are more than MAX_MERGE_CLUSTERS."""
    labels = cluster(points, radius, limit=MAX_MERGE_CLUSTERS)
    if labels is None:
        return None
    n = int(labels.max()) + 1
    part = folded_partition(n, labels, steps)
    if part is None:
        return None
    centres = np.array([points[labels == c].mean(0) for c in range(n)])
    return _merge_nearest(part, centres)[labels], n


MERGE_RADII = (0.3, 0.2, 0.1, 0.05, 0.02)


def extract_merged(weights: Sequence[np.ndarray], traces: Sequence[np.ndarray], reference: Transducer,
                   radii: tuple[float, ...] = MERGE_RADII) -> Extraction:
    """The smallest automaton over the radii: cluster, merge nearest-first, read the rules.

    Fewest states is Occam's choice among automata that all reproduce the training PTOs.
    """
    points, steps = teacher_forced_points(weights, traces)
    best = None
    for radius in radii:
        found = merged_labels(points, steps, radius)
        if found is not None and (best is None or found[0].max() < best[1].max()):
            best = radius, *found
    if best is None:
        raise DfstError(f"no radius in {list(radii)} reads a conflict-free automaton off these PTOs")
    radius, labels, clusters = best
    rules, _ = read_rules(labels, steps, reference.alphabet)
    return Extraction(transducer_from_rules(labels, rules, reference.alphabet, reference.blank), radius,
                      clusters, len(rules), "merge")
