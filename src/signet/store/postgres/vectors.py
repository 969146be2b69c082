"""Vector search on PostgreSQL with pgvector: vectors at full precision, an HNSW index over a
`halfvec` cast (half the RAM) built on first use under an advisory lock. A search takes
SHORTLIST_FACTOR x k candidates with iterative scan on, so selective filters still fill it, and
rescores them exactly; filters and scope are in the same statement.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from signet.store.postgres.filters import filter_sql
from signet.types import MemoryFilters

SHORTLIST_FACTOR = 10
MIN_SHORTLIST = 100
# pg_advisory_lock key for index builds (the bytes of 'sgnt-vec').
INDEX_LOCK = 0x73676E742D766563
MAX_HALFVEC_DIMENSIONS = 4000


def literal(vector: np.ndarray) -> str:
    """pgvector's text form, '[x1,x2,...]' (float32 values, repr-exact)."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def parse(text: str) -> np.ndarray:
    """A vector from pgvector's text form (`literal`'s inverse), float32."""
    return np.array(text.strip("[]").split(","), dtype=np.float32)


def of_memories(
    conn: psycopg.Connection, memory_ids: Sequence[str], model: str
) -> dict[str, np.ndarray]:
    """The current vectors of `model` of these memories (those that have one)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT m.id, e.vector::text FROM memories m JOIN embeddings e"
        " ON e.content_hash = m.content_hash AND e.model = %s AND NOT e.stale"
        " WHERE m.id = ANY(%s)",
        (model, list(memory_ids)),
    ).fetchall()
    return {str(r[0]): parse(r[1]) for r in rows}


def ensure_index(conn: psycopg.Connection, dimensions: int) -> None:
    """The HNSW index for `dimensions`, created once per database (autocommit connection)."""
    dimensions = int(dimensions)
    if not 0 < dimensions <= MAX_HALFVEC_DIMENSIONS:
        return  # beyond halfvec's HNSW limit the search stays exact (a scan)
    name = f"embeddings_hnsw_{dimensions}"
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    if exists and exists[0]:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (INDEX_LOCK,))
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw"
            f" ((vector::halfvec({dimensions})) halfvec_cosine_ops) WHERE dimensions = {dimensions}"
        )


def search(
    conn: psycopg.Connection, query: np.ndarray, *, model: str, filters: MemoryFilters,
    limit: int,
) -> list[tuple[str, float]]:
    if limit <= 0:
        return []
    with conn.transaction():
        rows = conn.execute(*statement(conn, query, model, filters, limit)).fetchall()
    return [(str(r[0]), float(r[1])) for r in rows]


def statement(
    conn: psycopg.Connection, query: np.ndarray, model: str, filters: MemoryFilters, limit: int
) -> tuple[str, list[object]]:
    """The search's statement and parameters, its HNSW settings made (inside a transaction):
    the shortlist ordered by the indexed `halfvec` expression, so the planner can walk the
    HNSW index, then rescored by the exact distance."""
    dims = int(np.asarray(query).shape[-1])
    where, params = filter_sql(filters)
    shortlist = max(MIN_SHORTLIST, SHORTLIST_FACTOR * limit)
    text = literal(query)
    # ef_search at twice the shortlist: HNSW's recall of the true top k grows with the
    # candidates it keeps (docs/benchmarks.md, "Store backends", measures the overlap).
    conn.execute(f"SET LOCAL hnsw.ef_search = {min(2 * shortlist, 1000)}")
    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    sql = (
        "WITH shortlist AS ("
        " SELECT e.content_hash, e.vector FROM embeddings e"
        f" WHERE e.dimensions = {dims} AND e.model = %s AND NOT e.stale"
        f" AND EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash"
        f" AND {where})"
        f" ORDER BY e.vector::halfvec({dims}) <=> %s::halfvec({dims}) LIMIT %s)"
        " SELECT m.id, 1 - (s.vector <=> %s::vector) AS score FROM shortlist s"
        f" JOIN memories m ON m.content_hash = s.content_hash AND {where}"
        " ORDER BY score DESC, m.id LIMIT %s"
    )
    return sql, [model, *params, text, shortlist, text, *params, limit]
