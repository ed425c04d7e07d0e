"""Nearest-first merging of the clusters read off a DFST (dfst.extract.merge, the default method)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dfst.extract.merge
from dfst.data import cover_dataset
from dfst.errors import DfstError
from dfst.extract import extract
from dfst.extract.cluster import cluster
from dfst.extract.merge import folded_partition, merge_clusters
from dfst.grid.rollout import rollout
from dfst.model import teacher_forced_points
from dfst.model.compile import compile_agent
from dfst.tasks import get_task


def test_copies_of_a_loop_merge_into_one_state():
    # clusters 0 -> 1 -> 2 on symbol 0, each writing 1 and moving R (move index 3); 2 stops on symbol 1
    edges = {(0, 0): (1, 1, 3), (1, 0): (2, 1, 3), (2, 0): (2, 1, 3), (2, 1): (-1, 0, 4)}
    centres = np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2]])
    assert merge_clusters(edges, centres).tolist() == [0, 0, 0]


def test_states_with_different_actions_never_merge():
    edges = {(0, 0): (1, 1, 3), (1, 0): (0, 0, 3)}  # same symbol read, different symbol written
    assert merge_clusters(edges, np.array([[1.0], [1.01]])).tolist() == [0, 1]


def test_a_merge_whose_fold_conflicts_is_undone():
    # 0 and 1 agree, but merging them merges 2 and 3, which disagree on symbol 1
    edges = {(0, 0): (2, 0, 3), (1, 0): (3, 0, 3), (2, 1): (-1, 0, 4), (3, 1): (-1, 1, 4)}
    centres = np.array([[0.0], [0.01], [5.0], [9.0]])
    labels = merge_clusters(edges, centres)
    assert labels[0] != labels[1] and labels[2] != labels[3]


def test_a_perturbed_compiled_expert_gives_back_an_automaton_as_exact_as_the_expert():
    task = get_task("add2")
    data = cover_dataset(task, 20, 3, seed=0)  # every rule shown: nothing left to guess
    model = compile_agent(task.agent, task="add2")
    g = torch.Generator().manual_seed(0)
    weights = tuple((w + 1e-3 * torch.randn(w.shape, generator=g)).numpy() for w in
                    (model.A.detach(), model.B.detach(), model.C.detach(), model.h0.detach()))
    found = extract(weights, data, task="add2")
    assert found.agent.d <= task.agent.d
    instances = task.hard_instances(40) + task.random_instances(40, 10, seed=5)
    results = rollout(task, instances, agent=found.agent)
    assert all(r.exact for r in results)


def test_radii_with_more_clusters_than_the_cap_are_skipped(monkeypatch):
    task = get_task("add2")
    data = cover_dataset(task, 20, 3, seed=0)
    weights = compile_agent(task.agent, task="add2").numpy_weights()
    points, _ = teacher_forced_points(weights, [data.trace(i) for i in range(data.samples)])
    assert np.array_equal(cluster(points, 0.3, limit=task.agent.d), cluster(points, 0.3))
    assert cluster(points, 0.3, limit=task.agent.d - 1) is None
    monkeypatch.setattr(dfst.extract.merge, "MAX_MERGE_CLUSTERS", task.agent.d - 1)
    with pytest.raises(DfstError, match="no radius"):
        extract(weights, data, task="add2")


def _steps(*edges):
    """PTO steps (from point, read, write, move, to point) with points named by their index."""
    return [(i, x, w, m, j) for i, x, w, m, j in edges]


def test_two_successors_of_one_cluster_are_folded_into_one():
    # points 0 and 1 share cluster 0 and read 0 alike, but step to points 2 and 3, in clusters 1 and 2
    labels = np.array([0, 0, 1, 2])
    part = folded_partition(3, labels, _steps((0, 0, 1, 3, 2), (1, 0, 1, 3, 3)))
    assert part is not None and part.find(1) == part.find(2) and part.find(0) != part.find(1)


def test_a_cluster_showing_two_actions_for_one_symbol_is_refused():
    labels = np.array([0, 0, 1, 2])
    assert folded_partition(3, labels, _steps((0, 0, 1, 3, 2), (1, 0, 0, 3, 3))) is None


def test_a_fold_that_forces_two_actions_together_is_refused():
    # the successors 1 and 2 must fold, but they write different symbols on symbol 1
    labels = np.array([0, 0, 1, 2, 3, 3])
    steps = _steps((0, 0, 1, 3, 2), (1, 0, 1, 3, 3), (2, 1, 0, 4, 4), (3, 1, 1, 4, 5))
    assert folded_partition(4, labels, steps) is None
