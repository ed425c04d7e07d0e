"""The compiled loops of extraction (leader clustering, nearest-first merging) against the plain
Python definitions they replace, on random inputs: the same labels, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dfst.extract.cluster import cluster
from dfst.extract.merge import merge_clusters
from extract_reference import HALT, reference_cluster, reference_merge


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
