"""Read a finite automaton off a DFST, from its teacher-forced hidden states on PTOs.

The model is run teacher-forced on PTOs (a trained model's own training set: no other data). Each
hidden state is scaled by its max-abs entry and the states are clustered greedily: a state joins
the first cluster whose centre is within `radius` in the max norm. Each (cluster, read symbol) pair
takes the action and successor cluster the PTOs show; a pair shown with two different outcomes is a
conflict. The radius is the largest on a fixed ladder that gives no conflict (fewest states), so the
choice uses nothing but the training PTOs. The result is a `Transducer` (states s0, s1, ..., halt),
which `compile_agent` turns into an exact one-hot DFST.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from dfst.automata import MOVES, Rule, Transducer, make_transducer
from dfst.data import PtoDataset
from dfst.errors import DfstError

RADII = (2.0, 1.5, 1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)  # tried largest first
HALT = "halt"


@dataclass(frozen=True)
class Extraction:
    agent: Transducer
    radius: float
    clusters: int
    pairs: int  # (state, symbol) pairs with a rule


def teacher_forced_points(weights: tuple[np.ndarray, ...], data: PtoDataset):
    """Scaled hidden states (n, d) and steps (from, read, write, move, to) over every PTO."""
    A, _, _, h0 = (w.astype(np.float64) for w in weights)
    points, steps = [], []
    for i in range(data.samples):
        h = h0
        points.append(_scaled(h))
        for x, w, m in data.trace(i):
            h = _power_of_two_scaled(A[x] @ h)
            points.append(_scaled(h))
            steps.append((len(points) - 2, int(x), int(w), int(m), len(points) - 1))
    return np.array(points), steps


def _power_of_two_scaled(h: np.ndarray) -> np.ndarray:
    """h brought to max-abs in [0.5, 1) by a power of two: exact, so the scaled points are the same
    bits as without it, but h no longer overflows on long PTOs (a trained mult10 model's did, within
    its 522-step PTOs)."""
    _, exponent = np.frexp(np.abs(h).max())
    return np.ldexp(h, -exponent)  # inf or nan: frexp gives exponent 0, h stays as it is


def _scaled(h: np.ndarray) -> np.ndarray:
    top = np.abs(h).max()
    return h / top if top > 0 else h


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
        seen[(labels[i], x)][(HALT if MOVES[m] == "S" else int(labels[j]), w, m)] += 1
    rules = {}
    for (c, x), outcomes in seen.items():
        (nxt, w, m), _ = outcomes.most_common(1)[0]
        rules[(c, x)] = Rule(f"s{c}", alphabet[x], nxt if nxt == HALT else f"s{nxt}", alphabet[w], MOVES[m])
    return rules, sum(len(o) > 1 for o in seen.values())


def extract_automaton(weights: tuple[np.ndarray, ...], data: PtoDataset, alphabet: tuple[str, ...],
                      blank: str, radii: tuple[float, ...] = RADII) -> Extraction:
    """The automaton of the largest conflict-free radius; DfstError if every radius conflicts."""
    points, steps = teacher_forced_points(weights, data)
    for radius in radii:
        labels = cluster(points, radius)
        rules, conflicts = read_rules(labels, steps, alphabet)
        if conflicts == 0:
            return Extraction(transducer_from_rules(labels, rules, alphabet, blank), radius,
                              int(labels.max()) + 1, len(rules))
    raise DfstError(f"no radius in {list(radii)} reads a conflict-free automaton off these PTOs")


def transducer_from_rules(labels: np.ndarray, rules: dict, alphabet, blank: str) -> Transducer:
    initial = f"s{labels[0]}"
    named = {r.state for r in rules.values()} | {r.next for r in rules.values()}
    others = sorted(named - {HALT, initial}, key=lambda s: int(s[1:]))
    return make_transducer([initial, *others, HALT], alphabet, rules.values(), initial=initial,
                           final=HALT, blank=blank, name="extracted")
