"""The `cluster` method: greedy clustering of a DFST's teacher-forced states, no merging.

The scaled teacher-forced states (`dfst.model.teacher_forced_points`) are clustered greedily: a state joins
the first cluster whose centre is within `radius` in the max norm. Each (cluster, read symbol) pair
takes the action and successor cluster the PTOs show; a pair shown with two different outcomes is a
conflict. The radius is the largest on a fixed ladder that gives no conflict (fewest states), so the
choice uses nothing but the training PTOs. The result is a `Transducer` (states s0, s1, ..., halt),
which `compile_agent` turns into an exact one-hot DFST.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numba
import numpy as np

from dfst.automata import MOVES, Rule, Transducer, make_transducer
from dfst.errors import DfstError
from dfst.extract.result import FINAL, HALT, STOP, Extraction
from dfst.model import teacher_forced_points

RADII = (2.0, 1.5, 1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)  # tried largest first


def cluster(points: np.ndarray, radius: float, limit: int | None = None) -> np.ndarray | None:
    """Greedy leader clustering in the max norm; returns a label per point (None past `limit` centres).

    A point joins the first centre within `radius`, else becomes a centre. Identical points are
    labelled once (teacher-forced states repeat a lot), in order of first appearance.
    """
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    order = np.argsort(np.unique(inverse, return_index=True)[1])  # unique rows in order of appearance
    label_of = _leader_labels(np.ascontiguousarray(unique[order], dtype=np.float64), float(radius),
                              -1 if limit is None else int(limit))
    if label_of is None:
        return None
    labels = np.empty(len(unique), dtype=np.int64)
    labels[order] = label_of
    return labels[inverse.reshape(-1)]


@numba.njit(cache=True, nogil=True)
def _leader_labels(rows: np.ndarray, radius: float, limit: int) -> np.ndarray | None:
    """The leader clustering of `rows` in their order: a compiled loop, since a state's test against
    the centres so far is a few dozen comparisons and a Python loop over 10^4-10^5 states costs more
    than the arithmetic (extraction was a quarter of a div10x1 run). limit < 0: no limit."""
    n, d = rows.shape
    centres = np.empty((n, d), dtype=np.float64)
    labels = np.empty(n, dtype=np.int64)
    count = 0
    for u in range(n):
        found = -1
        for c in range(count):
            near = True
            for j in range(d):
                if not abs(centres[c, j] - rows[u, j]) < radius:
                    near = False
                    break
            if near:
                found = c
                break
        if found < 0:
            if count == limit:
                return None
            centres[count] = rows[u]
            found = count
            count += 1
        labels[u] = found
    return labels


def read_rules(labels: np.ndarray, steps, alphabet) -> tuple[dict, int]:
    """The rule of each (cluster, symbol) pair the steps show, and how many pairs conflict."""
    seen: dict[tuple[int, int], Counter] = defaultdict(Counter)
    for i, x, w, m, j in steps:
        seen[(labels[i], x)][(HALT if m == STOP else int(labels[j]), w, m)] += 1
    rules = {}
    for (c, x), outcomes in seen.items():
        (nxt, w, m), _ = outcomes.most_common(1)[0]
        rules[(c, x)] = Rule(f"s{c}", alphabet[x], FINAL if nxt == HALT else f"s{nxt}", alphabet[w], MOVES[m])
    return rules, sum(len(o) > 1 for o in seen.values())


def extract_clustered(weights: Sequence[np.ndarray], traces: Sequence[np.ndarray], reference: Transducer,
                      radii: tuple[float, ...] = RADII) -> Extraction:
    """The automaton of the largest conflict-free radius; DfstError if every radius conflicts."""
    points, steps = teacher_forced_points(weights, traces)
    for radius in radii:
        labels = cluster(points, radius)
        rules, conflicts = read_rules(labels, steps, reference.alphabet)
        if conflicts == 0:
            return Extraction(transducer_from_rules(labels, rules, reference.alphabet, reference.blank),
                              radius, int(labels.max()) + 1, len(rules), "cluster")
    raise DfstError(f"no radius in {list(radii)} reads a conflict-free automaton off these PTOs")


def transducer_from_rules(labels: np.ndarray, rules: dict, alphabet, blank: str) -> Transducer:
    initial = f"s{labels[0]}"
    named = {r.state for r in rules.values()} | {r.next for r in rules.values()}
    others = sorted(named - {FINAL, initial}, key=lambda s: int(s[1:]))
    return make_transducer([initial, *others, FINAL], alphabet, rules.values(), initial=initial,
                           final=FINAL, blank=blank, name="extracted")
