"""SQL for the embedding projection: the live memories with a current vector in a caller's slice,
and the umap_cache rows. A projection is stale once the vector count changes, so the cache is
read with `count_embedded` and replaced whole. `SqliteProjection` is here, `PostgresProjection`
(one cache for every daemon) in store/postgres/projection.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import MemoryScope, dumps

_FROM = (
    " FROM memories m JOIN embeddings e ON e.content_hash = m.content_hash"
    " AND e.model = :model AND e.stale = 0"
    " WHERE m.is_deleted = 0 AND (:agent IS NULL OR m.agent_id = :agent)"
    " AND (:project IS NULL OR m.project = :project)"
)


@dataclass(frozen=True, slots=True)
class Points:
    ids: list[str]
    meta: list[dict[str, Any]]
    matrix: np.ndarray  # (n, dimensions) float32


class ProjectionStore(Protocol):
    """What the projection service needs of a store."""

    def count_embedded(self, model: str, scope: MemoryScope | None) -> int:
        """Live memories in the slice with a current vector of `model`."""
        ...

    def cached(
        self, dimensions: int, scope_key: str, model: str
    ) -> tuple[int, dict[str, Any]] | None:
        """(embedding_count, result) of the cached projection, or None."""
        ...

    def embedded_points(
        self, model: str, dimensions: int, scope: MemoryScope | None
    ) -> Points:
        """Every live memory in the slice with a current vector, oldest first."""
        ...

    def cache_put(
        self, *, dimensions: int, scope_key: str, model: str, embedding_count: int,
        method: str, result: dict[str, Any], now: str,
    ) -> None:
        """Replace the cached projection for the key (one write transaction)."""
        ...


@dataclass(frozen=True, slots=True)
class SqliteProjection:
    """The projection store on a workspace's Store: the functions below, unchanged."""

    store: Store

    def count_embedded(self, model: str, scope: MemoryScope | None) -> int:
        return count_embedded(self.store.reader(), model, scope)

    def cached(
        self, dimensions: int, scope_key: str, model: str
    ) -> tuple[int, dict[str, Any]] | None:
        return cache_get(self.store.reader(), dimensions, scope_key, model)

    def embedded_points(
        self, model: str, dimensions: int, scope: MemoryScope | None
    ) -> Points:
        return embedded_points(self.store.reader(), model, dimensions, scope)

    def cache_put(
        self, *, dimensions: int, scope_key: str, model: str, embedding_count: int,
        method: str, result: dict[str, Any], now: str,
    ) -> None:
        with self.store.write_tx() as conn:
            cache_put(conn, dimensions=dimensions, scope_key=scope_key, model=model,
                      embedding_count=embedding_count, method=method, result=result, now=now)


def _params(model: str, scope: MemoryScope | None) -> dict[str, Any]:
    scope = scope or MemoryScope()
    return {"model": model, "agent": scope.agent_id, "project": scope.project}


def count_embedded(conn: Connection, model: str, scope: MemoryScope | None) -> int:
    row = conn.execute(f"SELECT count(*){_FROM}", _params(model, scope)).fetchone()
    return int(row[0])


def embedded_points(
    conn: Connection, model: str, dimensions: int, scope: MemoryScope | None
) -> Points:
    """Every live memory in the slice with a current vector of `model`, oldest first."""
    rows = conn.execute(
        "SELECT m.id, substr(m.content, 1, 200) AS snippet, m.type, m.project, m.source_type,"
        " m.importance, m.created_at, (SELECT en.community_id FROM memory_entity_mentions mm"
        " JOIN entities en ON en.id = mm.entity_id WHERE mm.memory_id = m.id"
        " AND en.community_id IS NOT NULL LIMIT 1) AS community,"
        f" e.vector{_FROM} AND e.dimensions = :dims"
        " ORDER BY m.created_at, m.id",
        {**_params(model, scope), "dims": dimensions},
    ).fetchall()
    matrix = np.frombuffer(b"".join(r["vector"] for r in rows), dtype="<f4")
    return to_points(rows, matrix.astype(np.float32), dimensions)


def to_points(rows: Sequence[Any], matrix: np.ndarray, dimensions: int) -> Points:
    """The points of an embedded-points read: its rows (id, snippet, type, project,
    source_type, importance, created_at, community), `matrix` their vectors in order."""
    meta = [
        {"content": r["snippet"], "type": r["type"], "project": r["project"],
         "source_type": r["source_type"], "importance": r["importance"],
         "created_at": r["created_at"], "community": r["community"]}
        for r in rows
    ]
    return Points([r["id"] for r in rows], meta, matrix.reshape(len(rows), dimensions))


def cache_get(
    conn: Executes, dimensions: int, scope_key: str, model: str, dialect: Dialect = SQLITE
) -> tuple[int, dict[str, Any]] | None:
    """(embedding_count, result) of the cached projection, or None."""
    row = conn.execute(dialect.sql(
        "SELECT embedding_count, result_json FROM umap_cache"
        " WHERE dimensions = ? AND scope_key = ? AND model = ?"),
        (dimensions, scope_key, model),
    ).fetchone()
    return (int(row[0]), json.loads(row[1])) if row else None


def cache_put(
    conn: Executes, *, dimensions: int, scope_key: str, model: str, embedding_count: int,
    method: str, result: dict[str, Any], now: str, dialect: Dialect = SQLITE,
) -> None:
    conn.execute(dialect.sql(
        "INSERT INTO umap_cache (dimensions, scope_key, model, embedding_count, method,"
        " result_json, cached_at) VALUES (?,?,?,?,?,?,?)"
        " ON CONFLICT (dimensions, scope_key, model) DO UPDATE SET"
        " embedding_count = excluded.embedding_count, method = excluded.method,"
        " result_json = excluded.result_json, cached_at = excluded.cached_at"),
        (dimensions, scope_key, model, embedding_count, method, dumps(result), now),
    )


def add_points(
    conn: Connection, ids: list[str], vectors: np.ndarray, *, model: str, now: str
) -> None:
    """Memories with given vectors and nothing else (no history, no jobs): what `signet bench
    projection` lays out at 10k and 100k points, written far faster than remember could."""
    from signet.store.embeddings import to_blob

    conn.executemany(
        "INSERT INTO memories (id, content, content_hash, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(i, f"point {i}", f"bench:{i}", now, now) for i in ids],
    )
    conn.executemany(
        "INSERT INTO embeddings (content_hash, vector, dimensions, model, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(f"bench:{i}", to_blob(v), int(v.shape[-1]), model, now) for i, v in zip(ids, vectors, strict=True)],
    )
