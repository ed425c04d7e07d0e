"""The compiled loops of extraction (leader clustering, nearest-first merging) against the plain
Python definitions they replace, on random inputs: the same labels, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dfst.extract.cluster import cluster
from dfst.extract.merge import merge_clusters

HALT = -1


def reference_cluster(points, radius, limit=None):
    """Leader clustering as first written: each point against every centre so far, in numpy."""
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    order = np.argsort(np.unique(inverse, return_index=True)[1])
    centres, label_of, count = np.empty_like(unique), np.empty(len(unique), dtype=np.int64), 0
    for u in order:
        near = np.flatnonzero(np.abs(centres[:count] - unique[u]).max(axis=1) < radius)
        if near.size:
            label_of[u] = near[0]
        elif limit is not None and count == limit:
            return None
        else:
            centres[count], label_of[u] = unique[u], count
            count += 1
    return label_of[inverse.reshape(-1)]


def reference_merge(edges, centres):
    """Nearest-first merging as first written: each trial on a copy of the partition."""
    n = len(centres)
    parent, table = list(range(n)), {c: {} for c in range(n)}
    for (c, x), out in edges.items():
        table[c][x] = out

    def find(parent, c):
        while parent[c] != c:
            c = parent[c]
        return c

    def merge(parent, table, a, b):
        pending = [(a, b)]
        while pending:
            a, b = sorted(find(parent, c) for c in pending.pop())
            if a == b:
                continue
            parent[b] = a
            for x, (nb, wb, mb) in table.pop(b).items():
                if x not in table[a]:
                    table[a][x] = (nb, wb, mb)
                    continue
                na, wa, ma = table[a][x]
                if (wa, ma) != (wb, mb) or (na == HALT) != (nb == HALT):
                    return False
                if na != HALT:
                    pending.append((na, nb))
        return True

    gaps = np.abs(centres[:, None, :] - centres[None, :, :]).max(axis=2)
    pairs = sorted((gaps[i, j], i, j) for i in range(n) for j in range(i + 1, n))
    for _, first, second in pairs:
        trial_parent, trial_table = list(parent), {c: dict(t) for c, t in table.items()}
        if merge(trial_parent, trial_table, first, second):
            parent, table = trial_parent, trial_table
    roots = sorted({find(parent, c) for c in range(n)})
    return [roots.index(find(parent, c)) for c in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_leader_clustering_matches_its_definition(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 300)), int(rng.integers(1, 12))
    points = rng.normal(size=(n, d)).round(int(rng.integers(0, 3)))  # rounding makes repeats and ties
    if seed % 5 == 0:
        points[rng.integers(0, n)] = np.nan  # a diverged state is never near anything
    for radius in (2.0, 0.5, 0.1, 0.02):
        for limit in (None, 4, 60):
            expected, got = reference_cluster(points, radius, limit), cluster(points, radius, limit)
            assert (expected is None) == (got is None)
            if expected is not None:
                assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("seed", range(60))
def test_nearest_first_merging_matches_its_definition(seed):
    # a random partial machine over few actions, so that some merges hold and some folds conflict
    rng = np.random.default_rng(seed)
    n, symbols = int(rng.integers(2, 40)), int(rng.integers(1, 4))
    edges = {}
    for c in range(n):
        for x in range(symbols):
            if rng.random() < 0.7:
                halts = rng.random() < 0.1
                edges[(c, x)] = (HALT if halts else int(rng.integers(0, n)), int(rng.integers(0, 2)),
                                 4 if halts else int(rng.integers(0, 2)))
    centres = rng.normal(size=(n, int(rng.integers(1, 4)))).round(1)  # ties in the order of pairs
    assert merge_clusters(edges, centres).tolist() == reference_merge(edges, centres)
