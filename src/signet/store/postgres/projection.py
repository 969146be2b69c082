"""The projection store (`ProjectionStore`) on PostgreSQL: the caller's slice's live memories with a
current vector (read as `real[]`, the same float32 values SQLite holds) and the `umap_cache`
table, replaced whole per key. A memory's community comes from the graph's tables when they exist
(`to_regclass`, asked on every read, so another daemon's migration is seen at once), else None.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from signet.store import projection
from signet.store.dialect import POSTGRES
from signet.store.postgres.filters import scope_sql
from signet.store.projection import Points
from signet.types import MemoryScope

_FROM = (
    " FROM memories m JOIN embeddings e ON e.content_hash = m.content_hash"
    " AND e.model = %s AND NOT e.stale WHERE NOT m.is_deleted AND "
)
_COMMUNITY = (
    "(SELECT en.community_id FROM memory_entity_mentions mm JOIN entities en"
    " ON en.id = mm.entity_id WHERE mm.memory_id = m.id AND en.community_id IS NOT NULL"
    " LIMIT 1)"
)


class PostgresProjection:
    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def count_embedded(self, model: str, scope: MemoryScope | None) -> int:
        where, params = scope_sql(scope)
        with self.pool.connection() as conn:
            row = conn.execute(f"SELECT count(*){_FROM}{where}", [model, *params]).fetchone()
        return int(row[0]) if row else 0

    def cached(
        self, dimensions: int, scope_key: str, model: str
    ) -> tuple[int, dict[str, Any]] | None:
        with self.pool.connection() as conn:
            return projection.cache_get(conn, dimensions, scope_key, model, POSTGRES)

    def embedded_points(
        self, model: str, dimensions: int, scope: MemoryScope | None
    ) -> Points:
        where, params = scope_sql(scope)
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            graph = cur.execute(
                "SELECT to_regclass('entities') IS NOT NULL"
                " AND to_regclass('memory_entity_mentions') IS NOT NULL AS present"
            ).fetchone()
            community = _COMMUNITY if graph and graph["present"] else "NULL::text"
            rows = cur.execute(
                "SELECT m.id, substr(m.content, 1, 200) AS snippet, m.type, m.project,"
                f" m.source_type, m.importance, m.created_at, {community} AS community,"
                f" e.vector::real[] AS vector{_FROM}{where} AND e.dimensions = %s"
                " ORDER BY m.created_at, m.id",
                [model, *params, dimensions],
            ).fetchall()
        matrix = np.array([r["vector"] for r in rows], dtype=np.float32)
        return projection.to_points(rows, matrix, dimensions)

    def cache_put(
        self, *, dimensions: int, scope_key: str, model: str, embedding_count: int,
        method: str, result: dict[str, Any], now: str,
    ) -> None:
        with self.pool.connection() as conn:
            projection.cache_put(conn, dimensions=dimensions, scope_key=scope_key, model=model,
                                 embedding_count=embedding_count, method=method, result=result,
                                 now=now, dialect=POSTGRES)
