"""Exploratory (not part of the package): read a finite automaton off a trained DFST.

Runs the trained model teacher-forced on its own training PTOs (the run's data.pto.zip, nothing
else), normalises each hidden state by its max-abs entry, clusters the states greedily with a
max-norm radius, reads each (cluster, symbol) pair's action and successor off the PTOs, compiles the
resulting automaton to an exact one-hot DFST and evaluates it closed-loop on hard + random instances
at 10, 1,000 and 100,000 digits.

    python experiments/extract_automaton.py runs/long/noise-l1-100k 0.2

Results are in docs/research/training.md.
"""
import sys
from collections import Counter, defaultdict

import numpy as np
import torch

from dfst.automata import MOVES, Rule, make_transducer
from dfst.data import load_dataset
from dfst.grid.rollout import DfstWeights, rollout
from dfst.model.checkpoint import load_checkpoint
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS

run = sys.argv[1]; radius = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
model, cfg = load_checkpoint(f"{run}/model"); ds = load_dataset(f"{run}/data.pto.zip")
task = TASKS[cfg["task"]]; A, B, C, h0 = model.numpy_weights()
# teacher-forced states along every training PTO
points, steps = [], []   # steps: (index of h_t, read, write, move, index of h_{t+1})
for i in range(ds.samples):
    tr = ds.trace(i); h = h0.astype(np.float64)
    idx = len(points); points.append(h / np.abs(h).max())
    for t, (x, w, m) in enumerate(tr):
        h = A[x].astype(np.float64) @ h
        points.append(h / max(np.abs(h).max(), 1e-30))
        steps.append((idx, x, w, m, idx + 1)); idx += 1
P = np.array(points)
# greedy clustering with a radius (relative to max-abs normalised states)
centers, label = [], np.empty(len(P), int)
for j, p in enumerate(P):
    for c, q in enumerate(centers):
        if np.abs(p - q).max() < radius: label[j] = c; break
    else:
        centers.append(p); label[j] = len(centers) - 1
print("clusters", len(centers), "expert states", task.agent.d)
trans = defaultdict(Counter)
for i, x, w, m, j in steps:
    trans[(label[i], x)][(label[j] if MOVES[m] != "S" else "halt", w, m)] += 1
conflicts = sum(len(v) > 1 for v in trans.values())
print("observed (state, symbol) pairs", len(trans), "conflicts", conflicts)
states = [f"s{c}" for c in range(len(centers))] + ["halt"]
rules = []
for (c, x), cnt in trans.items():
    (nxt, w, m), _ = cnt.most_common(1)[0]
    rules.append(Rule(f"s{c}", task.alphabet[x], "halt" if nxt == "halt" else f"s{nxt}", task.alphabet[w], MOVES[m]))
init = f"s{label[0]}"
order = [init] + [s for s in states if s not in (init, "halt")] + ["halt"]
agent = make_transducer(order, task.alphabet, rules, initial=init, final="halt", blank="_", name="extracted")
w = DfstWeights.of(*compile_agent(agent).numpy_weights())
for n in (10, 1000, 100000):
    r = rollout(task, task.hard_instances(n) + task.random_instances(n, 10, seed=n), weights=w)
    print(n, sum(x.exact for x in r), "/", len(r), Counter(x.verdict for x in r))
