"""SQL for the retention sweep: find what has expired and delete it, at
most `limit` rows per step, oldest first, so repeated sweeps catch up on a backlog.

Every statement carries its own expiry condition, even when it is handed a list of ids chosen
in an earlier transaction: a memory recovered (or re-added with the same content) between two
steps is live again, and nothing here may touch a live memory. Each `count_*` function is the
dry-run twin of the delete beside it: same condition, same cap, nothing written.

Steps 1-3 work on one list of expired tombstones; graph links and mention counts are handled
by `knowledge.decrement_entity_mentions`, the job steps by `jobs.purge`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from signet.store.connection import Connection

_EXPIRED = "is_deleted = 1 AND deleted_at IS NOT NULL AND deleted_at < ?"
_CHUNK = 500  # ids per statement, well under SQLite's limit on bound parameters


def _chunks(values: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """`values` in slices of _CHUNK, each with its "?,?,..." placeholder list."""
    for start in range(0, len(values), _CHUNK):
        chunk = list(values[start : start + _CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def expired_tombstones(conn: Connection, before: str, limit: int) -> list[str]:
    """Ids of soft-deleted memories deleted before `before`, oldest first, at most `limit`."""
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {_EXPIRED} ORDER BY deleted_at, id LIMIT ?",
        (before, max(limit, 0)),
    ).fetchall()
    return [r[0] for r in rows]


def still_expired(conn: Connection, ids: Sequence[str], before: str) -> list[str]:
    """The ids that are still expired tombstones now (re-checked inside each step's tx)."""
    found: list[str] = []
    for chunk, marks in _chunks(ids):
        found += [r[0] for r in conn.execute(
            f"SELECT id FROM memories WHERE id IN ({marks}) AND {_EXPIRED}", (*chunk, before)
        )]
    return found


def count_mention_links(conn: Connection, ids: Sequence[str]) -> int:
    total = 0
    for chunk, marks in _chunks(ids):
        total += int(conn.execute(
            f"SELECT count(*) FROM memory_entity_mentions WHERE memory_id IN ({marks})", chunk
        ).fetchone()[0])
    return total


def _orphan_hashes_sql(marks: str) -> str:
    # A vector is keyed by content hash; a live memory (re-added after the delete) or a
    # tombstone not yet expired may share it, and then it stays. Tombstones that have expired
    # too do not hold it, whether or not they are in this chunk of ids: two of them sharing a
    # hash in different chunks would otherwise keep each other's vector after both are gone.
    return (
        f"SELECT DISTINCT m.content_hash FROM memories m WHERE m.id IN ({marks})"
        f" AND m.{_EXPIRED} AND m.content_hash IS NOT NULL AND NOT EXISTS ("
        " SELECT 1 FROM memories o WHERE o.content_hash = m.content_hash"
        " AND NOT (o.is_deleted = 1 AND o.deleted_at IS NOT NULL AND o.deleted_at < ?))"
    )


def tombstone_vector_hashes(conn: Connection, ids: Sequence[str], before: str) -> list[str]:
    """Content hashes whose vector no memory but expired tombstones uses."""
    found: set[str] = set()
    for chunk, marks in _chunks(ids):
        found.update(r[0] for r in conn.execute(_orphan_hashes_sql(marks), (*chunk, before, before)))
    return sorted(found)


def delete_tombstones(conn: Connection, ids: Sequence[str], before: str) -> int:
    """Hard-delete the expired tombstones among `ids` (the FTS trigger cleans the index; the
    count comes from the id list, not from changes(), which the trigger inflates)."""
    doomed = still_expired(conn, ids, before)
    for chunk, marks in _chunks(doomed):
        conn.execute(f"DELETE FROM memories WHERE id IN ({marks}) AND {_EXPIRED}", (*chunk, before))
    return len(doomed)


# --- plain time windows: history, cold rows, idempotency keys -------------------------------

_WINDOWED = {
    "history": ("memory_history", "id", "created_at"),
    "cold": ("memories_cold", "id", "archived_at"),
    # Keys are unique per scope, not alone (migration 011): rows are deleted by rowid.
    "idempotency_keys": ("idempotency_scoped_keys", "rowid", "created_at"),
    # WITHOUT ROWID, keyed by (caller, session_id, memory_id): matched by that row value.
    "hook_ledger": ("hook_injections", "caller, session_id, memory_id", "injected_at"),
}


def delete_older(conn: Connection, kind: str, before: str, limit: int) -> int:
    """Delete at most `limit` rows of `kind` older than `before`, oldest first."""
    table, key, column = _WINDOWED[kind]
    cursor = conn.execute(
        f"DELETE FROM {table} WHERE ({key}) IN (SELECT {key} FROM {table} WHERE {column} < ?"
        f" ORDER BY {column} LIMIT ?)",
        (before, max(limit, 0)),
    )
    return cursor.rowcount


def count_older(conn: Connection, kind: str, before: str, limit: int) -> int:
    table, key, column = _WINDOWED[kind]
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {column} < ? LIMIT ?)",
        (before, max(limit, 0)),
    ).fetchone()
    return int(row[0])


def count_jobs(conn: Connection, status: str, before: str, limit: int) -> int:
    column = "completed_at" if status == "completed" else "failed_at"
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memory_jobs WHERE status = ? AND {column} < ?"
        " LIMIT ?)",
        (status, before, max(limit, 0)),
    ).fetchone()
    return int(row[0])
