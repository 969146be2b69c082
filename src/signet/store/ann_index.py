"""Approximate nearest neighbours for large stores: an HNSW graph proposes, the stored float32
vectors decide.

Above `embedding.ann_min_vectors` the int8 scan of every row dominates recall, so a usearch graph
proposes SHORTLIST_FACTOR x k candidates (at least MIN_SHORTLIST), rescored with the table's exact
vectors: scores are exact, only top-k membership is approximate. A search restricted to `allowed`
ids is exact. The graph persists beside the database (`save`, `load`), so a restart adds only what
changed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from signet.errors import InvalidInput
from signet.store.vector_index import ExactRows, _as_query, _as_rows, _last_wins, _unit, top_k

# Graph parameters (usearch's names): neighbours per node, and the candidates kept while
# inserting and while searching. On 100k of the bundled model's vectors (`signet bench
# vector-graph`, docs/decisions.md) the top 10 overlapped the exact one at 0.994 with these
# (ef 256: 0.981); with 16 neighbours and 128 at insertion, at 0.978 (ef 1024: 0.993, half
# as slow again).
CONNECTIVITY = 32
EXPANSION_ADD = 200
EXPANSION_SEARCH = 512
SHORTLIST_FACTOR = 4
MIN_SHORTLIST = 100
# Beyond this many candidates asked of the graph a search is exact instead: the graph's cost
# grows with the candidates, a filtered caller's widening search reaches here only when its
# filter admits few rows.
MAX_GRAPH_FETCH = 4096


class HnswIndex:
    """usearch HNSW over unit vectors (cosine), keyed by embedding id; exact rescoring."""

    def __init__(
        self, dimensions: int, exact_rows: ExactRows, expansion_search: int = EXPANSION_SEARCH
    ) -> None:
        from usearch.index import Index  # imported where used: only large stores need it

        if dimensions <= 0:
            raise InvalidInput("dimensions must be positive")
        self.dimensions = dimensions
        # Candidates kept while searching (ef): the overlap with the exact top k against the
        # time, measured by `signet bench vector-graph`.
        self.expansion_search = expansion_search
        self._exact_rows = exact_rows
        self._graph = Index(
            ndim=dimensions, metric="cos", dtype="i8", connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH,
        )
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._graph)

    def __contains__(self, id_: object) -> bool:
        return isinstance(id_, int) and bool(self._graph.contains(id_))

    def ids(self) -> np.ndarray:
        """Every id held (int64, unordered)."""
        with self._lock:
            return np.asarray(self._graph.keys, dtype=np.int64)

    def add(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Insert the vectors of ids not held yet. Table ids are never reused (AUTOINCREMENT, and a
        replaced vector gets a new id), so an id seen again is the same vector and is skipped."""
        rows = _as_rows(ids, vectors, self.dimensions)
        latest = _last_wins(ids)
        keys = np.fromiter(latest, dtype=np.uint64, count=len(latest))
        picked = rows[np.fromiter(latest.values(), dtype=np.int64, count=len(latest))]
        with self._lock:
            fresh = ~np.asarray(self._graph.contains(keys), dtype=bool).reshape(-1)
            if fresh.any():
                self._graph.add(keys[fresh], picked[fresh], threads=1)

    def remove(self, ids: Sequence[int]) -> None:
        keys = np.asarray([int(i) for i in ids], dtype=np.uint64)
        if len(keys) == 0:
            return
        with self._lock:
            held = np.asarray(self._graph.contains(keys), dtype=bool).reshape(-1)
            if held.any():
                self._graph.remove(keys[held])

    def search(
        self, query: np.ndarray, k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        q = _as_query(query, self.dimensions)
        if k <= 0:
            return []
        if allowed is not None:
            return self._exact(q, k, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
        fetch = max(MIN_SHORTLIST, SHORTLIST_FACTOR * k)
        if fetch > MAX_GRAPH_FETCH:
            return self._exact(q, k, self.ids())
        with self._lock:
            if len(self._graph) == 0:
                return []
            # usearch types the property read-only although it has a setter.
            self._graph.expansion_search = max(  # type: ignore[misc]
                self.expansion_search, fetch)
            found = self._graph.search(q, min(fetch, len(self._graph)), threads=1)
            keys = np.asarray(found.keys, dtype=np.int64).reshape(-1)
        return self._rescored(q, k, keys)

    def _rescored(self, q: np.ndarray, k: int, keys: np.ndarray) -> list[tuple[int, float]]:
        found, rows = self._exact_rows(keys)
        if len(found) == 0:
            return []
        return top_k(found, _unit(rows) @ q, k)

    def _exact(self, q: np.ndarray, k: int, ids: np.ndarray) -> list[tuple[int, float]]:
        """The exact top k among `ids` (their stored vectors read in steps)."""
        best: list[tuple[int, float]] = []
        for start in range(0, len(ids), 8192):
            best = top_k(
                *_merged(best, *self._scored(q, ids[start : start + 8192])), k
            )
        return best

    def _scored(self, q: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found, rows = self._exact_rows(ids)
        if len(found) == 0:
            return found, np.zeros(0, dtype=np.float32)
        return found, _unit(rows) @ q

    def agrees(self, ids: np.ndarray, rows: np.ndarray) -> bool:
        """Whether the graph's vectors of `ids` point where `rows` (the table's) do: a graph read
        back from a file saved for another database (a restored backup reusing ids) does not."""
        if len(ids) == 0:
            return True
        with self._lock:
            held = self._graph.get(np.asarray(ids, dtype=np.uint64), dtype="f32")
        if held is None or any(h is None for h in held):
            return False
        mine = _unit(np.asarray(held, dtype=np.float32).reshape(len(ids), -1))
        # int8 codes of a unit vector keep its direction to a cosine of about 0.9999.
        return bool(((mine * _unit(rows)).sum(axis=1) > 0.99).all())

    def save(self, path: Path) -> None:
        """Write the graph to `path` (through a temporary file renamed over it, so a reader
        never sees half a file)."""
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with self._lock:
            self._graph.save(str(tmp))
        os.replace(tmp, path)

    def load(self, path: Path) -> bool:
        """Replace the graph by the one saved at `path`; False (and the graph kept as it was)
        when the file is missing or was saved for other vectors."""
        from usearch.index import Index

        try:
            meta = Index.metadata(str(path))
        except Exception:  # a missing, truncated or foreign file: built again instead
            return False
        if not meta or int(meta.get("dimensions", -1)) != self.dimensions:
            return False
        with self._lock:
            try:
                self._graph.load(str(path))
            except Exception:
                return False
        return True


def _merged(
    best: list[tuple[int, float]], ids: np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`best`'s pairs and a new batch of (ids, scores) as one pair of arrays."""
    if not best:
        return ids, scores
    held_ids = np.asarray([i for i, _ in best], dtype=np.int64)
    held_scores = np.asarray([s for _, s in best], dtype=scores.dtype if len(scores) else np.float32)
    return np.concatenate([held_ids, ids]), np.concatenate([held_scores, scores])

