"""Extraction with nearest-first RPNI-style merging on trained runs, as docs/research/training.md section 8
measured it: without the fold of successors that dfst.extract.merge.merged_labels now does (section 9), so a
radius whose clusters show two successors for one (cluster, symbol) pair is skipped here.

    python experiments/merge_extract.py runs/add2-seeds/s*/
"""
import sys
from pathlib import Path

import numpy as np

from dfst.data import load_dataset
from dfst.extract.cluster import cluster, read_rules, transducer_from_rules
from dfst.extract.merge import merge_clusters, transitions
from dfst.grid.rollout import DfstWeights
from dfst.model import teacher_forced_points
from dfst.model.checkpoint import load_checkpoint
from dfst.model.compile import compile_agent
from dfst.protocol.config import EvalConfig
from dfst.protocol.evaluate import run_protocol
from dfst.tasks import get_task
from dfst.tasks.base import BLANK


def merged_agent(weights, data, task, radius):
    points, steps = teacher_forced_points(weights, [data.trace(i) for i in range(data.samples)])
    labels = cluster(points, radius)
    _, conflicts = read_rules(labels, steps, task.alphabet)
    if conflicts:
        return None
    n = labels.max() + 1
    centres = np.array([points[labels == c].mean(0) for c in range(n)])
    block = merge_clusters(transitions(labels, steps)[0], centres)
    labels2 = block[labels]
    rules, conflicts = read_rules(labels2, steps, task.alphabet)
    assert conflicts == 0
    return transducer_from_rules(labels2, rules, task.alphabet, BLANK), n


for run in sys.argv[1:]:
    run = Path(run)
    model, config = load_checkpoint(run / "model")
    task = get_task(config["task"])
    data = load_dataset(run / "data.pto.zip")
    w = model.numpy_weights()
    for radius in (0.05, 0.1, 0.2):
        got = merged_agent(w, data, task, radius)
        if got is None:
            print(run.name, radius, "conflict")
            continue
        agent, n = got
        rep, _ = run_protocol(task, DfstWeights.of(*compile_agent(agent).numpy_weights()),
                              EvalConfig((10, 1000, 100000), random=10))
        print(run.name, f"radius {radius}: {n} clusters -> {agent.d} states {len(agent.rules)} rules; exact",
              [lv["exact"] for lv in rep["levels"]], "of", rep["levels"][0]["instances"], flush=True)
