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

import numpy as np

from dfst.automata import MOVES, Rule, Transducer, make_transducer
from dfst.errors import DfstError
from dfst.extract.result import FINAL, HALT, STOP, Extraction
from dfst.model import teacher_forced_points

RADII = (2.0, 1.5, 1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)  # tried largest first


def cluster(points: np.ndarray, radius: float, limit: int | None = None) -> np.ndarray | None:
    """Greedy leader clustering in the max norm; returns a label per point (None past `limit` centres).

    A point joins the first centre within `radius`, else becomes a centre. Identical points are
    labelled once (teacher-forced states repeat a lot), and each test is one vectorised comparison.
    """
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    order = np.argsort(np.unique(inverse, return_index=True)[1])  # unique rows in order of appearance
    centres = np.empty_like(unique)
    count = 0
    label_of = np.empty(len(unique), dtype=np.int64)
    for u in order:
        near = np.flatnonzero(np.abs(centres[:count] - unique[u]).max(axis=1) < radius)
        if near.size:
            label_of[u] = near[0]
        elif limit is not None and count == limit:
            return None
        else:
            centres[count] = unique[u]
            label_of[u] = count
            count += 1
    return label_of[inverse.reshape(-1)]


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
