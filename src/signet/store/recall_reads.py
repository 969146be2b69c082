"""What recall reads from a store: one protocol, so one Recaller ranks on every backend. Per recall
the Recaller opens one `RecallReader` on one connection; it answers the channels and lookups
while all ranking stays in the Recaller. `SqliteRecallReads` reads FTS5 and the in-memory
indexes; PostgreSQL's reads tsvector BM25 and pgvector. A part a backend lacks is listed in
`missing` or raises `NotOnBackend`, reported as `degraded`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import numpy as np

from signet.store import fts, graph_read
from signet.store import memories as mem_sql
from signet.store import sources as source_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.neighbours import neighbours
from signet.store.sources import SourceHit, SourceKey
from signet.types import Memory, MemoryFilters

Ranking = list[tuple[str, float]]

__all__ = [
    "NearestVectors", "Ranking", "RecallReader", "RecallReads", "SourceHit", "SourceKey",
    "SqliteRecallReads", "narrows",
]


def narrows(filters: MemoryFilters) -> bool:
    """Whether `filters` admit fewer than all live memories (the vector channel then searches
    within them, and context checks the neighbours it lends to)."""
    f = filters
    return any(
        [f.type, f.tags, f.who, f.project, f.since, f.until, f.pinned is not None,
         f.importance_min is not None, f.agent_id, f.source_id, f.community]
    )


class RecallReader(Protocol):
    """One recall's reads. Rankings are (memory id, score) best first, higher is better."""

    # The backend's connection, for extra channels and hooks written for that backend.
    conn: Any

    def lexical(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        """BM25 over content and tags (the words stemmed), within `filters`; an isolated
        slice is ranked by its own term statistics."""
        ...

    def has_hints(self, filters: MemoryFilters) -> bool:
        """Whether any memory within `filters` carries prospective hints."""
        ...

    def hints(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        """BM25 over the prospective hints (NotOnBackend where hint search is not ported)."""
        ...

    def nearest(
        self, vector: np.ndarray, filters: MemoryFilters, limit: int, min_cosine: float
    ) -> Ranking:
        """(memory id, cosine) of the `limit` nearest live memories within `filters` (exactly
        within them, not the filtered global top) whose cosine reaches `min_cosine`."""
        ...

    def sources_ranked(self, filters: MemoryFilters) -> bool:
        """Whether any whole source (>= 2 live members) lies within the filters' slice."""
        ...

    def sources(self, text: str, filters: MemoryFilters, limit: int) -> list[SourceHit]:
        """Whole sources by BM25 over their members' text joined, best first."""
        ...

    def source_keys(self, ids: Sequence[str]) -> dict[str, SourceKey]:
        """Memory id -> its source's key, for members of sources ranked as a whole."""
        ...

    def documents(self, source_ids: Sequence[str]) -> set[str]:
        """The ids among `source_ids` that name a document (its chunks share its id)."""
        ...

    def source_representatives(
        self, hits: Sequence[SourceHit], filters: MemoryFilters
    ) -> dict[SourceKey, str]:
        """Each source's first live member passing `filters` (write order)."""
        ...

    def neighbours(self, ids: Sequence[str], *, same_project: bool) -> dict[str, list[str]]:
        """Memory id -> its conversation neighbours (recall/context.py has the rule)."""
        ...

    def allowed_ids(self, ids: Sequence[str], filters: MemoryFilters) -> set[str]:
        """The ids among `ids` of memories passing `filters`."""
        ...

    def term_idf(self, tokens: Sequence[str], filters: MemoryFilters) -> dict[str, float]:
        """BM25's IDF of each query token over the memories (an isolated slice: its own)."""
        ...

    def memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids (deleted ones too; unknown ids left out)."""
        ...

    def vectors(self, ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        """The current vectors of `model` of these memories (those that have one)."""
        ...


class RecallReads(Protocol):
    """A backend's recall reads: a reader per recall, and what the backend lacks."""

    backend: str
    # Parts recall uses that this backend does not have yet ("graph", "transcripts").
    missing: frozenset[str]

    @property
    def searches_vectors(self) -> bool:
        """Whether `nearest` can answer (SQLite: a vector index was built for the embedder)."""
        ...

    def reader(self) -> AbstractContextManager[RecallReader]: ...


class NearestVectors(Protocol):
    """A vector index over the SQLite store (recall/vectors.py `VectorSearch`)."""

    def nearest(
        self, conn: Connection, vector: np.ndarray, filters: MemoryFilters, limit: int,
        min_cosine: float,
    ) -> Ranking: ...


class SqliteRecallReads:
    backend = "sqlite"
    missing: frozenset[str] = frozenset()

    def __init__(self, store: Store, vectors: NearestVectors | None = None) -> None:
        self.store = store
        self.vectors = vectors

    @property
    def searches_vectors(self) -> bool:
        return self.vectors is not None

    @contextmanager
    def reader(self) -> Iterator[SqliteRecallReader]:
        yield SqliteRecallReader(self.store, self.store.reader(), self.vectors)


class SqliteRecallReader:
    def __init__(self, store: Store, conn: Connection, vectors: NearestVectors | None) -> None:
        self.store = store
        self.conn = conn
        self._vectors = vectors

    def lexical(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        return fts.search(self.conn, text, filters, limit, index=self.store.lexical)

    def has_hints(self, filters: MemoryFilters) -> bool:
        return fts.has_hints(self.conn, filters)

    def hints(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        return fts.search(self.conn, text, filters, limit, columns=fts.HINT_COLUMNS)

    def nearest(
        self, vector: np.ndarray, filters: MemoryFilters, limit: int, min_cosine: float
    ) -> Ranking:
        assert self._vectors is not None  # asked only when `searches_vectors`
        return self._vectors.nearest(self.conn, vector, filters, limit, min_cosine)

    def sources_ranked(self, filters: MemoryFilters) -> bool:
        return source_sql.any_ranked(self.conn, filters)

    def sources(self, text: str, filters: MemoryFilters, limit: int) -> list[SourceHit]:
        tokens = fts.search_tokens(self.conn, text)
        return source_sql.search(
            self.conn, text, filters.agent_id, limit, tokens,
            project=filters.project, filters=filters,
        )

    def source_keys(self, ids: Sequence[str]) -> dict[str, SourceKey]:
        return source_sql.keys_of(self.conn, list(ids))

    def documents(self, source_ids: Sequence[str]) -> set[str]:
        return source_sql.documents(self.conn, list(source_ids))

    def source_representatives(
        self, hits: Sequence[SourceHit], filters: MemoryFilters
    ) -> dict[SourceKey, str]:
        return source_sql.representatives(self.conn, hits, filters)

    def neighbours(self, ids: Sequence[str], *, same_project: bool) -> dict[str, list[str]]:
        return neighbours(self.conn, ids, same_project=same_project)

    def allowed_ids(self, ids: Sequence[str], filters: MemoryFilters) -> set[str]:
        return mem_sql.allowed_ids(self.conn, list(ids), filters)

    def term_idf(self, tokens: Sequence[str], filters: MemoryFilters) -> dict[str, float]:
        return fts.term_idf(self.conn, tokens, filters)

    def memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        return mem_sql.get_many(self.conn, list(ids))

    def vectors(self, ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        return graph_read.memory_vectors(self.conn, list(ids), model)
