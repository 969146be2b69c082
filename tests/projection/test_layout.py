"""The projection's math: neighbour counts, exact and approximate kNN, normalisation, PCA."""

from __future__ import annotations

import numpy as np

from signet.projection.layout import (
    HALF_RANGE,
    approximate_knn,
    exact_knn,
    layout,
    n_neighbors,
    normalise,
)


def _unit(n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_neighbour_count_adapts_to_small_stores() -> None:
    assert [n_neighbors(n) for n in (1, 2, 3, 10, 16, 17, 5000)] == [2, 2, 2, 9, 15, 15, 15]


def test_exact_knn_puts_each_point_first_and_matches_brute_force() -> None:
    x = _unit(60)
    idx, dist = exact_knn(x, 5)
    assert (idx[:, 0] == np.arange(60)).all() and (dist[:, 0] == 0).all()
    brute = np.argsort(1 - x @ x.T, axis=1)[:, 1:5]
    assert (np.sort(idx[:, 1:], axis=1) == np.sort(brute, axis=1)).all()


def test_approximate_knn_finds_most_true_neighbours_without_duplicates() -> None:
    # Clustered data, as embeddings are: the windows over a 2-D PCA find the true neighbours.
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(20, 16))
    x = np.repeat(centres, 50, axis=0) + rng.normal(scale=0.05, size=(1000, 16))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    idx, dist = approximate_knn(x, 15)
    assert (idx[:, 0] == np.arange(1000)).all()
    assert all(len(set(row)) == 15 for row in idx.tolist())
    assert (np.diff(dist, axis=1) >= -1e-6).all()
    true_idx, _ = exact_knn(x, 15)
    same_cluster = (idx // 50) == (np.arange(1000)[:, None] // 50)
    assert same_cluster.mean() > 0.9
    overlap = np.mean([len(set(a) & set(b)) / 15 for a, b in zip(idx, true_idx, strict=True)])
    assert overlap > 0.3


def test_normalise_maps_each_axis_onto_the_seed_range() -> None:
    coords = normalise(np.array([[0.0, 5.0, 1.0], [10.0, 5.0, 3.0], [5.0, 5.0, 2.0]]))
    assert coords[:, 0].tolist() == [-HALF_RANGE, HALF_RANGE, 0.0]
    assert coords[:, 1].tolist() == [0.0, 0.0, 0.0]  # a flat axis sits in the middle
    assert coords[:, 2].min() == -HALF_RANGE and coords[:, 2].max() == HALF_RANGE


def test_pca_fallback_separates_clusters_and_is_flagged() -> None:
    rng = np.random.default_rng(2)
    x = np.vstack([rng.normal(loc=3, size=(30, 16)), rng.normal(loc=-3, size=(30, 16))])
    placed = layout(x.astype(np.float32), 3, use_umap=False)
    assert placed.method == "pca" and placed.coords.shape == (60, 3)
    assert np.abs(placed.coords).max() <= HALF_RANGE + 1e-9
    assert np.sign(placed.coords[:30, 0]).tolist() != np.sign(placed.coords[30:, 0]).tolist()
    assert abs(placed.coords[:30, 0].mean() - placed.coords[30:, 0].mean()) > 200
