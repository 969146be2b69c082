"""The semantic channel's index: vectors from the embeddings table, searched exactly in RAM.

Float32 BLOBs in SQLite are the source of truth; `VectorSearch` keeps a `QuantizedIndex` (int8
rows, rescored exactly from the table's float32 vectors: `embedding.index: quantized`, the
default) or a `NumpyIndex` (the float32 matrix: `exact`) in step with the table; both return
the exact top k. Before each search it compares the
table's change marker (max id, row count) with the one it last loaded: new rows are appended
incrementally; any other change (a replaced or deleted vector, a model switch) triggers a full
reload. That keeps every process that reads the database (daemon, CLI, benchmarks) correct
without a notification channel, at the cost of one PRAGMA per search, and the aggregate query
only when the reading connection has seen a commit since its last look.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from signet.store import embeddings as emb_sql
from signet.store import memories as mem_sql
from signet.store.connection import Connection
from signet.store.recall_reads import narrows
from signet.store.vector_index import NumpyIndex, QuantizedIndex, VectorIndex
from signet.types import MemoryFilters

IndexKind = Literal["quantized", "exact"]
# Vectors read from the table per step while (re)loading: bounds the transient copies (a 50k
# step held 77 MB of blobs and as much again as a matrix at 384 dimensions; at 8,192 the
# quantized index's float64 residuals still put 44 MB above the loaded index at 100k, the
# process's peak RSS; at 2,048 about 11).
LOAD_STEP = 2048
# Reading connections whose last seen state is remembered (a daemon has one per thread).
MAX_SEEN_CONNECTIONS = 64


class VectorSearch:
    def __init__(self, model: str, dimensions: int, index: IndexKind = "quantized") -> None:
        self.model = model
        self.dimensions = dimensions
        self.kind = index
        # The reading thread's connection, for the quantized index's exact rescoring.
        self._local = threading.local()
        self._index: VectorIndex = self._new_index()
        self._loaded_max = 0
        self._marker: tuple[int, int] = (0, 0)
        # Per reading connection: (the connection, its (data_version, total_changes), the
        # marker it last saw); see `sync`.
        self._seen: dict[int, tuple[Connection, tuple[int, int], tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def _new_index(self, capacity: int = 1024) -> VectorIndex:
        if self.kind == "exact":
            return NumpyIndex(self.dimensions, capacity)
        return QuantizedIndex(self.dimensions, self._exact_rows, capacity)

    def _exact_rows(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return emb_sql.vectors_by_id(self._local.conn, ids.tolist(), self.dimensions)

    def __len__(self) -> int:
        return len(self._index)

    def sync(self, conn: Connection) -> None:
        # The marker query counts the table (4-5 ms of CPU at 100k rows); it is skipped when
        # this connection has seen no commit since it last found the index in step: SQLite's
        # data_version moves with every other connection's commit, total_changes with its own.
        seen = emb_sql.commits_seen(conn)
        known = self._seen.get(id(conn))
        if known is not None and known[0] is conn and known[1:] == (seen, self._marker):
            return
        marker = emb_sql.change_marker(conn)
        if marker != self._marker:
            with self._lock:
                if marker != self._marker:
                    self._catch_up(conn, marker)
        if len(self._seen) > MAX_SEEN_CONNECTIONS:
            self._seen.clear()
        # The connection itself is kept with its state, so its id cannot be reused meanwhile.
        self._seen[id(conn)] = (conn, seen, marker)

    def _catch_up(self, conn: Connection, marker: tuple[int, int]) -> None:
        max_id, count = self._marker
        reload = len(self._index) == 0 or marker[0] < max_id
        if reload or marker[1] != count + emb_sql.count_since(conn, max_id):
            # A full reload is built aside and swapped in whole: searches meanwhile (threads
            # whose sync found nothing to do) keep the old index, never a half-loaded one.
            # Sized for every row at once: growing by doubling held the old and the new
            # arrays together at each step (at 100k x 384 int8, 25 MB more at the peak).
            fresh = self._new_index(capacity=marker[1] + LOAD_STEP)
            loaded = self._load_new(conn, fresh, 0)
            self._index, self._loaded_max = fresh, loaded
        else:
            self._loaded_max = self._load_new(conn, self._index, self._loaded_max)
        self._marker = marker

    def _load_new(self, conn: Connection, index: VectorIndex, after_id: int) -> int:
        """Add the vectors above `after_id` to `index`, a step at a time; the last id loaded."""
        while True:
            ids, matrix = emb_sql.load_since(conn, self.model, self.dimensions, after_id, LOAD_STEP)
            if not ids:
                return after_id
            index.add(ids, matrix)
            after_id = ids[-1]

    def add(self, embedding_id: int, vector: np.ndarray) -> None:
        """Add a vector just written by this process (saves the next sync a query)."""
        with self._lock:
            self._index.add([embedding_id], vector.reshape(1, -1))

    def search(
        self, conn: Connection, query: np.ndarray, k: int
    ) -> list[tuple[str, float]]:
        """(memory id, cosine) of the nearest live memories, best first."""
        self.sync(conn)
        if k <= 0 or len(self._index) == 0:
            return []
        self._local.conn = conn
        hits = self._index.search(query.astype(np.float32), k)
        owners = emb_sql.memory_ids_for(conn, [emb_id for emb_id, _ in hits])
        results: list[tuple[str, float]] = []
        for emb_id, score in hits:
            for memory_id in owners.get(emb_id, ()):
                results.append((memory_id, float(score)))
        return results

    def search_within(
        self, conn: Connection, query: np.ndarray, k: int,
        allowed: Callable[[list[str]], set[str]], min_score: float,
    ) -> list[tuple[str, float]]:
        """The nearest `k` memories that `allowed` admits (a filter, a caller's scope), exactly:
        the search widens until k admitted memories are found or the index is exhausted, so
        memories outside the filter never crowd out the ones inside it."""
        self.sync(conn)
        wanted = k
        while True:
            found = [(m, s) for m, s in self.search(conn, query, wanted) if s >= min_score]
            admitted = allowed([m for m, _ in found])
            kept = [(m, s) for m, s in found if m in admitted]
            exhausted = wanted >= len(self._index) or len(found) < wanted
            if len(kept) >= k or exhausted:
                return kept[:k]
            wanted *= 4

    def nearest(
        self, conn: Connection, query: np.ndarray, filters: MemoryFilters, k: int,
        min_cosine: float,
    ) -> list[tuple[str, float]]:
        """The semantic channel (store/recall_reads.py `NearestVectors`): the `k` nearest
        memories within `filters` whose cosine reaches `min_cosine`."""
        if narrows(filters):
            # The nearest memories *within* the filters (a scope), not the filtered global top.
            return self.search_within(
                conn, query, k, lambda ids: mem_sql.allowed_ids(conn, ids, filters), min_cosine
            )
        return [(m, s) for m, s in self.search(conn, query, k) if s >= min_cosine]

    def embedded_ids(self, ids: Sequence[int]) -> list[int]:
        return [i for i in ids if i in self._index]
