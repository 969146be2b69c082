"""SQL for the embeddings table: vectors keyed by content hash, so equal text is embedded once.

Vectors are float32 little-endian BLOBs, the source of truth; the in-RAM search index is
rebuilt from them. Each row records the model and dimensions that made it. When the configured
model changes, rows of other models are marked stale and re-embedded in the background; a stale
row is never searched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes

# A vector to store: (content hash, vector, the memory it was embedded for, if any).
VectorItem = tuple[str, np.ndarray, str | None]


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dimensions: int) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4", count=dimensions)


def upsert(
    conn: Connection,
    content_hash: str,
    vector: np.ndarray,
    *,
    model: str,
    now: str,
    source_type: str | None = "memory",
    source_id: str | None = None,
) -> int:
    """Store (or replace) the vector for `content_hash`; return the row id.

    A replacement deletes the old row and inserts a new one (a new id) rather than updating in
    place, so readers' change markers (max id, count) notice it and reload."""
    conn.execute("DELETE FROM embeddings WHERE content_hash = ?", (content_hash,))
    row = conn.execute(
        "INSERT INTO embeddings (content_hash, vector, dimensions, model, source_type, source_id,"
        " created_at, stale) VALUES (?,?,?,?,?,?,?,0) RETURNING id",
        (content_hash, to_blob(vector), int(vector.shape[-1]), model, source_type, source_id, now),
    ).fetchone()
    return int(row[0])


def has_current(
    conn: Executes, content_hash: str, model: str, dialect: Dialect = SQLITE
) -> bool:
    row = conn.execute(dialect.sql(
        f"SELECT 1 FROM embeddings WHERE content_hash = ? AND model = ? AND {dialect.no('stale')}"),
        (content_hash, model),
    ).fetchone()
    return row is not None


# A step of a load walks the table from `after_id` on. `+model` keeps the planner off the
# (model, stale) index, which took every current row of the model, sorted them with their
# vectors and kept the first `limit`: each step of a load did that again, over ten minutes to
# load a million vectors.
LOAD_SINCE = (
    "SELECT id, vector FROM embeddings WHERE id > ? AND +model = ? AND stale = 0 "
    "AND dimensions = ? ORDER BY id LIMIT ?"
)


def load_since(
    conn: Connection, model: str, dimensions: int, after_id: int, limit: int = 50_000
) -> tuple[list[int], np.ndarray]:
    """Current (non-stale) vectors of `model` with id > after_id, oldest first."""
    rows = conn.execute(LOAD_SINCE, (after_id, model, dimensions, limit)).fetchall()
    if not rows:
        return [], np.zeros((0, dimensions), dtype=np.float32)
    ids = [int(r[0]) for r in rows]
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dimensions)
    return ids, matrix


def current_ids(conn: Connection, model: str, dimensions: int) -> np.ndarray:
    """The ids of every current (non-stale) vector of `model` (int64, ascending): what an
    approximate index must hold, compared with what a saved one does."""
    rows = conn.execute(
        "SELECT id FROM embeddings WHERE model = ? AND stale = 0 AND dimensions = ? ORDER BY id",
        (model, dimensions),
    )
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def ids_within(
    conn: Connection, model: str, dimensions: int, where: str, params: Sequence[object]
) -> np.ndarray:
    """The current vector ids of the memories `where` admits (a `memories.filter_sql`
    fragment over alias m): the rows an exact search within a selective filter scores."""
    rows = conn.execute(
        "SELECT DISTINCT v.id FROM memories m JOIN embeddings v ON v.content_hash = m.content_hash"
        f" WHERE {where} AND v.model = ? AND v.stale = 0 AND v.dimensions = ?",
        [*params, model, dimensions],
    )
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def vectors_by_id(
    conn: Connection, ids: Sequence[int], dimensions: int,
    hashes: dict[int, str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(ids found, their float32 vectors as rows): the exact vectors a quantized index
    rescores its shortlist with; ids no longer stored are left out. With `hashes`, each found
    id's content hash is put there too (read from the same rows: who owns a vector is then
    found without reading them again)."""
    found: list[int] = []
    blobs: list[bytes] = []
    for start in range(0, len(ids), 500):
        chunk = [int(i) for i in ids[start : start + 500]]
        rows = conn.execute(
            "SELECT id, vector, content_hash FROM embeddings"
            f" WHERE id IN ({','.join('?' * len(chunk))}) AND dimensions = ?",
            [*chunk, dimensions],
        ).fetchall()
        for emb_id, blob, content_hash in rows:
            found.append(int(emb_id))
            blobs.append(blob)
            if hashes is not None:
                hashes[int(emb_id)] = content_hash
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(found), dimensions)
    return np.asarray(found, dtype=np.int64), matrix


def change_marker(conn: Connection) -> tuple[int, int]:
    """(max id, row count): changes whenever vectors are added, replaced or removed."""
    row = conn.execute("SELECT coalesce(max(id), 0), count(*) FROM embeddings").fetchone()
    return int(row[0]), int(row[1])


def commits_seen(conn: Connection) -> tuple[int, int]:
    """What this connection has seen committed: (data_version, total_changes). SQLite moves
    data_version with every other connection's commit and total_changes with its own, so an
    unchanged pair means the tables read the same as last time (no table is scanned)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes


def count_since(conn: Connection, after_id: int) -> int:
    """How many vectors have an id above `after_id` (rows appended since a load)."""
    row = conn.execute("SELECT count(*) FROM embeddings WHERE id > ?", (after_id,)).fetchone()
    return int(row[0])


def memory_ids_for(conn: Connection, embedding_ids: Sequence[int]) -> dict[int, list[str]]:
    """Live memory ids per embedding id (several memories never share a live hash, but a
    deleted and a live one may)."""
    found: dict[int, list[str]] = {}
    for start in range(0, len(embedding_ids), 500):
        chunk = list(embedding_ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        # CROSS JOIN keeps embeddings the outer loop (lookup by rowid, then the hash index);
        # a plain JOIN let SQLite scan live memories and probe embeddings: 300 ms at 13k rows.
        rows = conn.execute(
            "SELECT e.id, m.id FROM embeddings e CROSS JOIN memories m"
            " ON m.content_hash = e.content_hash AND m.is_deleted = 0"
            f" AND m.content_hash IS NOT NULL WHERE e.id IN ({marks})",
            chunk,
        )
        for emb_id, memory_id in rows:
            found.setdefault(int(emb_id), []).append(memory_id)
    return found


def live_ids_by_hash(conn: Connection, content_hashes: Sequence[str]) -> dict[str, list[str]]:
    """Live memory ids per content hash, in the order `memory_ids_for` gives them (both read
    the scoped content-hash index): the owners of vectors whose hashes are known."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(content_hashes), 500):
        chunk = list(content_hashes[start : start + 500])
        rows = conn.execute(
            "SELECT content_hash, id FROM memories INDEXED BY idx_memories_scope_content_hash"
            f" WHERE content_hash IN ({','.join('?' * len(chunk))})"
            " AND content_hash IS NOT NULL AND is_deleted = 0",
            chunk,
        )
        for content_hash, memory_id in rows:
            found.setdefault(content_hash, []).append(memory_id)
    return found


def mark_stale_except(conn: Connection, model: str, dimensions: int) -> int:
    """Mark every vector not made by (model, dimensions) stale; return how many changed."""
    cursor = conn.execute(
        "UPDATE embeddings SET stale = 1 WHERE stale = 0 AND (model != ? OR dimensions != ?)",
        (model, dimensions),
    )
    return cursor.rowcount


def missing(conn: Connection, model: str, limit: int) -> list[tuple[str, str]]:
    """(content_hash, content) of live memories with no current vector of `model`."""
    rows = conn.execute(
        "SELECT m.content_hash, m.content FROM memories m LEFT JOIN embeddings e "
        "ON e.content_hash = m.content_hash AND e.model = ? AND e.stale = 0 "
        "WHERE m.is_deleted = 0 AND m.content_hash IS NOT NULL AND e.id IS NULL "
        "GROUP BY m.content_hash LIMIT ?",
        (model, limit),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


# The distinct texts of the live memories, from the dedup index (migration 010), which holds
# exactly the live rows with a hash, in hash order: no table rows read, no temporary b-tree
# (100k memories: 8 ms of CPU against 340 ms). Named, because without statistics the planner
# takes the (is_deleted, created_at) index and reads every row.
AUDIT_LIVE = (
    "SELECT count(DISTINCT content_hash) FROM memories INDEXED BY"
    " idx_memories_scope_content_hash WHERE content_hash IS NOT NULL AND is_deleted = 0"
)
# The current vectors of a model whose memory is live: read from the index alone
# (migration 062), never from the table's rows, which hold the vectors.
AUDIT_CURRENT = (
    "SELECT count(*) FROM embeddings e WHERE e.model = ? AND e.stale = 0 AND EXISTS "
    "(SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash AND m.is_deleted = 0)"
)


def audit(conn: Connection, model: str) -> dict[str, int]:
    live = conn.execute(AUDIT_LIVE).fetchone()[0]
    current = conn.execute(AUDIT_CURRENT, (model,)).fetchone()[0]
    stale = conn.execute("SELECT count(*) FROM embeddings WHERE stale = 1").fetchone()[0]
    total = conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    return {
        "memories": int(live), "embedded": int(current), "missing": int(live) - int(current),
        "stale": int(stale), "vectors": int(total),
    }


def delete_for_hashes(
    conn: Executes, hashes: Iterable[str], dialect: Dialect = SQLITE
) -> int:
    """Delete the vectors of `hashes` (500 per statement); return how many rows went."""
    values = list(hashes)
    count = 0
    for start in range(0, len(values), 500):
        among, chunk = dialect.one_of("content_hash", values[start : start + 500])
        count += conn.execute(f"DELETE FROM embeddings WHERE {among}", chunk).rowcount
    return count


def vector_for(conn: Connection, content_hash: str, model: str) -> np.ndarray | None:
    """The current vector of `model` for `content_hash`, or None."""
    row = conn.execute(
        "SELECT vector, dimensions FROM embeddings WHERE content_hash = ? AND model = ?"
        " AND stale = 0",
        (content_hash, model),
    ).fetchone()
    return from_blob(row[0], int(row[1])).copy() if row else None


def missing_memory_ids(
    conn: Executes, model: str, limit: int, dialect: Dialect = SQLITE
) -> list[str]:
    """Ids of live memories with no current vector of `model` (the re-embed repair's targets),
    oldest first."""
    rows = conn.execute(dialect.sql(
        "SELECT m.id FROM memories m LEFT JOIN embeddings e"
        f" ON e.content_hash = m.content_hash AND e.model = ? AND {dialect.no('e.stale')}"
        f" WHERE {dialect.no('m.is_deleted')} AND m.content_hash IS NOT NULL AND e.id IS NULL"
        f" ORDER BY m.created_at, m.{dialect.insertion_order} LIMIT ?"),
        (model, limit),
    ).fetchall()
    return [r[0] for r in rows]

