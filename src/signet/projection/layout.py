"""Laying embeddings out in 2 or 3 dimensions for the dashboard's map: UMAP (the `viz` extra) when
installed, else PCA (`"method": "pca"`). The neighbour graph is built here and passed as
`precomputed_knn`, so umap-learn never starts pynndescent (a ~40 s JIT compile): exact up to 450
points, above that the candidates along the two axes of a 2-D PCA, picked by cosine distance.
Coordinates are scaled to [-210, 210] per axis.
"""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import dataclass

import numpy as np

EXACT_KNN_MAX = 450
HALF_RANGE = 210.0
WINDOW_PER_NEIGHBOUR = 2  # candidates on each side of a point, per neighbour wanted, per axis
CHUNK_ROWS = 512  # rows whose candidate vectors are gathered at once (memory bound)


@dataclass(frozen=True, slots=True)
class Layout:
    coords: np.ndarray  # (n, dimensions), each axis in [-HALF_RANGE, HALF_RANGE]
    method: str  # "umap" or "pca"
    n_neighbors: int
    knn: str  # "exact", "approximate" or "none" (PCA needs no neighbour graph)


def umap_available() -> bool:
    # A folder left behind by an uninstall is a namespace package (no origin), not umap-learn.
    spec = importlib.util.find_spec("umap")
    return spec is not None and spec.origin is not None


def n_neighbors(n: int) -> int:
    return min(15, max(2, n - 1))


def layout(vectors: np.ndarray, dimensions: int, *, use_umap: bool | None = None) -> Layout:
    """Coordinates for `vectors` (n, d): UMAP when available (or asked), else PCA."""
    n = len(vectors)
    k = n_neighbors(n)
    if n <= dimensions + 1:
        # Too few points for either method to mean anything: spread them out on a line.
        return Layout(normalise(_trivial(n, dimensions)), "pca", k, "none")
    if use_umap is None:
        use_umap = umap_available()
    if not use_umap:
        return Layout(normalise(pca(vectors, dimensions)), "pca", k, "none")
    unit = _unit_rows(vectors)
    exact = n <= EXACT_KNN_MAX
    indices, distances = exact_knn(unit, k) if exact else approximate_knn(unit, k)
    coords = _umap(unit, dimensions, k, indices, distances)
    return Layout(normalise(coords), "umap", k, "exact" if exact else "approximate")


PCA_SAMPLE = 20_000  # rows the covariance is estimated from; the top axes barely move beyond


def pca(vectors: np.ndarray, dimensions: int) -> np.ndarray:
    """The first `dimensions` principal components, through the d x d covariance of at most
    PCA_SAMPLE rows (a fixed-seed sample: at 100k x 384 that is far cheaper than an SVD of
    the data, and the picture is the same run after run)."""
    data = vectors.astype(np.float32, copy=False)
    mean = data.mean(axis=0, dtype=np.float64).astype(np.float32)
    sample = data
    if len(data) > PCA_SAMPLE:
        rows = np.random.default_rng(0).choice(len(data), PCA_SAMPLE, replace=False)
        sample = data[np.sort(rows)]
    centred_sample = sample - mean
    cov = (centred_sample.T @ centred_sample).astype(np.float64)
    values, vecs = np.linalg.eigh(cov)
    top = vecs[:, np.argsort(values)[::-1][:dimensions]]
    # Fix each axis's sign, so equal input gives equal pictures run after run.
    top *= np.where(top[np.abs(top).argmax(axis=0), range(top.shape[1])] < 0, -1.0, 1.0)
    return ((data - mean) @ top.astype(np.float32)).astype(np.float64)


def exact_knn(unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each point's k nearest by cosine distance (itself first, at 0)."""
    dist = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(dist, -1.0)  # self first, whatever duplicates exist
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    found = np.take_along_axis(dist, order, axis=1)
    found[:, 0] = 0.0
    return order.astype(np.int64), found.astype(np.float32)


def approximate_knn(unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sliding windows over the points sorted along each axis of a 2-D PCA."""
    n = len(unit)
    window = max(k * WINDOW_PER_NEIGHBOUR, 2)
    flat = pca(unit, 2)
    candidates = np.concatenate([_window(np.argsort(flat[:, a]), window) for a in (0, 1)], axis=1)
    candidates = np.sort(candidates, axis=1)
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, CHUNK_ROWS):
        rows = slice(start, min(start + CHUNK_ROWS, n))
        cand = candidates[rows]
        dist = 1.0 - np.einsum("id,ijd->ij", unit[rows], unit[cand])
        dist[cand == np.arange(rows.start, rows.stop)[:, None]] = -1.0  # self first
        dist[:, 1:][cand[:, 1:] == cand[:, :-1]] = np.inf  # a candidate met in both orders
        best = np.argsort(dist, axis=1, kind="stable")[:, :k]
        indices[rows] = np.take_along_axis(cand, best, axis=1)
        distances[rows] = np.clip(np.take_along_axis(dist, best, axis=1), 0.0, 2.0)
    return indices, distances


def _window(order: np.ndarray, window: int) -> np.ndarray:
    """(n, 2*window + 1): for each point, the points around it in `order` (clamped at the
    ends, where the window slides inwards instead of shrinking)."""
    n = len(order)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    offsets = np.arange(-window, window + 1)
    start = np.clip(position - window, 0, max(n - (2 * window + 1), 0))
    slots = np.clip(start[:, None] + window + offsets, 0, n - 1)
    return order[slots]


def _umap(
    unit: np.ndarray, dimensions: int, k: int, indices: np.ndarray, distances: np.ndarray
) -> np.ndarray:
    import umap  # the viz extra; imported only here (its first import compiles with numba)

    reducer = umap.UMAP(
        n_components=dimensions, n_neighbors=k, metric="cosine", random_state=42, n_jobs=1,
        precomputed_knn=(indices, distances, None),
    )
    with warnings.catch_warnings():
        # "no NNDescent index: transform unavailable" - we never transform new points.
        warnings.filterwarnings("ignore", category=UserWarning, module="umap")
        return np.asarray(reducer.fit_transform(unit), dtype=np.float64)


def normalise(coords: np.ndarray) -> np.ndarray:
    """Min-max each axis to [-HALF_RANGE, HALF_RANGE]; a flat axis sits at 0."""
    low, high = coords.min(axis=0), coords.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    scaled = (coords - low) / span * (2 * HALF_RANGE) - HALF_RANGE
    return np.where(high > low, scaled, 0.0)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _trivial(n: int, dimensions: int) -> np.ndarray:
    coords = np.zeros((n, dimensions))
    coords[:, 0] = np.arange(n)
    return coords
