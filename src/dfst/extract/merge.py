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

import numba
import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.extract.cluster import cluster, read_rules, transducer_from_rules
from dfst.extract.result import HALT, STOP, Extraction
from dfst.model import teacher_forced_points

# A partial Mealy machine over clusters: (cluster, symbol) -> (next cluster or HALT, write, move)
Edges = dict[tuple[int, int], tuple[int, int, int]]


ABSENT = np.iinfo(np.int64).min  # no edge on this symbol (HALT, -1, is a successor)


class _Partition:
    """Union-find over clusters with the merged transition table of each block, as arrays for the
    compiled loop `_merge_pairs`: parent (n,), and table (n, symbols, 3) of (successor or ABSENT,
    write, move). Only a root's row of the table is read; a block's root is its smallest cluster."""

    def __init__(self, n: int, edges: Edges):
        symbols = 1 + max((x for _, x in edges), default=0)
        self.parent = np.arange(n, dtype=np.int64)
        self.table = np.full((n, symbols, 3), ABSENT, dtype=np.int64)
        for (c, x), out in edges.items():
            self.table[c, x] = out

    def find(self, c: int) -> int:
        return int(_root(self.parent, c))

    def merge_all(self, first: np.ndarray, second: np.ndarray, *, strict: bool) -> bool:
        """Merge and fold each pair (first[p], second[p]) in turn. strict: stop at the first that
        conflicts and return False (the partition is then spoiled); else undo that one and go on."""
        return _merge_pairs(self.parent, self.table, np.asarray(first, dtype=np.int64),
                            np.asarray(second, dtype=np.int64), strict)


def merge_clusters(edges: Edges, centres: np.ndarray) -> np.ndarray:
    """A block label per cluster after merging compatible clusters, nearest centres first.

    `edges` must be conflict-free (`transitions`)."""
    return _merge_nearest(_Partition(len(centres), edges), centres)


def _merge_nearest(part: _Partition, centres: np.ndarray) -> np.ndarray:
    """A block label per cluster after merging compatible blocks of `part`, nearest centres first.

    Pairs of clusters are tried in increasing max-norm distance of their centres (ties by index); a
    rejected merge leaves the partition as it was. The pairs run through a compiled loop
    (`_merge_pairs`): mult10 and div10x1 try 10^5-10^6 of them per radius.
    """
    n = len(centres)
    gaps = np.zeros((n, n))  # max-norm distances, one coordinate at a time: n² memory, not n²·d
    for column in centres.T:
        np.maximum(gaps, np.abs(column[:, None] - column[None, :]), out=gaps)
    first, second = np.triu_indices(n, 1)
    order = np.lexsort((second, first, gaps[first, second]))
    part.merge_all(first[order], second[order], strict=False)
    roots = np.array([part.find(c) for c in range(n)], dtype=np.int64)
    return np.unique(roots, return_inverse=True)[1].reshape(-1)


@numba.njit(cache=True, nogil=True)
def _root(parent, c):
    while parent[c] != c:
        c = parent[c]
    return c


@numba.njit(cache=True, nogil=True)
def _merge_pairs(parent, table, first, second, strict):
    """`_Partition.merge_all`, in place: a merge joins two blocks, then the blocks their successors
    on each shared symbol, recursively (RPNI's fold); it conflicts where two joined blocks act
    differently on one symbol. A conflicting merge is undone from a log of the entries it changed
    (or, strict, ends the loop: False). The outcome does not depend on the order in which a merge's
    pending pairs are taken."""
    n, symbols = table.shape[0], table.shape[1]
    linked = np.empty(n, dtype=np.int64)  # the log of a trial: clusters given a parent ...
    filled = np.empty((n * symbols, 2), dtype=np.int64)  # ... and (root, symbol) edges added
    pending = np.empty((n * symbols + 1, 2), dtype=np.int64)
    for p in range(first.shape[0]):
        a, b = _root(parent, first[p]), _root(parent, second[p])
        parent[first[p]], parent[second[p]] = a, b  # path compression, outside any trial
        if a == b:
            continue
        if _clash(table, a, b):  # a cheap pre-check: the merge would conflict at its first step
            if strict:
                return False
            continue
        n_linked, n_filled, top, ok = 0, 0, 1, True
        pending[0, 0], pending[0, 1] = a, b
        while top > 0 and ok:
            top -= 1
            a, b = _root(parent, pending[top, 0]), _root(parent, pending[top, 1])
            if a == b:
                continue
            if a > b:
                a, b = b, a
            parent[b] = a
            linked[n_linked] = b
            n_linked += 1
            for x in range(symbols):
                if table[b, x, 0] == ABSENT:
                    continue
                if table[a, x, 0] == ABSENT:
                    table[a, x] = table[b, x]
                    filled[n_filled, 0], filled[n_filled, 1] = a, x
                    n_filled += 1
                elif _differ(table, a, b, x):
                    ok = False
                    break
                elif table[a, x, 0] != HALT:
                    pending[top, 0], pending[top, 1] = table[a, x, 0], table[b, x, 0]
                    top += 1
        if not ok:
            if strict:
                return False
            for e in range(n_filled):
                table[filled[e, 0], filled[e, 1], 0] = ABSENT
            for e in range(n_linked):
                parent[linked[e]] = linked[e]
    return True


@numba.njit(cache=True, nogil=True)
def _clash(table, a, b):
    """Roots a and b act differently on a shared symbol: no merge can hold (cheap pre-check)."""
    for x in range(table.shape[1]):
        if table[a, x, 0] != ABSENT and table[b, x, 0] != ABSENT and _differ(table, a, b, x):
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _differ(table, a, b, x):
    """The edges of a and b on symbol x (both present) write, move or halt differently."""
    return (table[a, x, 1] != table[b, x, 1] or table[a, x, 2] != table[b, x, 2]
            or (table[a, x, 0] == HALT) != (table[b, x, 0] == HALT))


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
    if any((w_a, m_a) != (w_b, m_b) or (nxt_a == HALT) != (nxt_b == HALT)
           for (nxt_a, w_a, m_a), (nxt_b, w_b, m_b) in pending):
        return None
    part = _Partition(n, edges)
    if not part.merge_all([a[0] for a, _ in pending], [b[0] for _, b in pending], strict=True):
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
