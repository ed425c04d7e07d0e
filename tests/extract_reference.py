"""The plain definitions of extraction's two compiled loops (`dfst.extract.cluster._leader_labels`,
`dfst.extract.merge._merge_pairs`), as first written in numpy and Python: the specification that
tests/test_extract_compiled.py checks them against, and the baseline benchmarks/extraction.py times."""

from __future__ import annotations

import numpy as np

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


def reference_merge(edges, centres, parent=None):
    """Nearest-first merging as first written: each trial on a copy of the partition (`parent`: one
    already folded, whose roots hold `edges`; default every cluster its own block)."""
    n = len(centres)
    parent, table = list(range(n)) if parent is None else list(parent), {c: {} for c in range(n)}
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

    def clashes(table, a, b):
        return any(x in table[a] and (table[a][x][1:] != out[1:]
                                      or (table[a][x][0] == HALT) != (out[0] == HALT))
                   for x, out in table[b].items())

    gaps = np.abs(centres[:, None, :] - centres[None, :, :]).max(axis=2)
    pairs = sorted((gaps[i, j], i, j) for i in range(n) for j in range(i + 1, n))
    for _, first, second in pairs:
        a, b = find(parent, first), find(parent, second)
        if a == b or clashes(table, a, b):  # the earlier code's checks before it copied
            continue
        trial_parent, trial_table = list(parent), {c: dict(t) for c, t in table.items()}
        if merge(trial_parent, trial_table, first, second):
            parent, table = trial_parent, trial_table
    roots = sorted({find(parent, c) for c in range(n)})
    return [roots.index(find(parent, c)) for c in range(n)]
