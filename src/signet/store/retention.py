"""SQL for the retention sweep: what has expired, deleted at most `limit` rows per step, oldest
first, so repeated sweeps catch up on a backlog.

Every statement carries its own expiry condition, even for ids chosen in an earlier transaction: a
memory recovered between two steps is live again and must not be touched. Each `count_*` is the dry-
run twin of the delete beside it. Both stores run these statements in their dialect.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from signet.store.dialect import SQLITE, Dialect, Executes

_CHUNK = 500  # ids per statement, well under SQLite's limit on bound parameters


def _expired(dialect: Dialect, alias: str = "") -> str:
    """The memory is a tombstone deleted before the bound time."""
    return (f"{dialect.yes(alias + 'is_deleted')} AND {alias}deleted_at IS NOT NULL"
            f" AND {alias}deleted_at < {dialect.mark}")


def _chunks(values: Sequence[str], column: str, dialect: Dialect) -> Iterator[tuple[str, list[Any]]]:
    """`values` in slices of _CHUNK, each as "`column` is one of them" with its parameters."""
    for start in range(0, len(values), _CHUNK):
        yield dialect.one_of(column, values[start : start + _CHUNK])


def expired_tombstones(
    conn: Executes, before: str, limit: int, dialect: Dialect = SQLITE
) -> list[str]:
    """Ids of soft-deleted memories deleted before `before`, oldest first, at most `limit`."""
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {_expired(dialect)} ORDER BY deleted_at, id"
        f" LIMIT {dialect.mark}",
        (before, max(limit, 0)),
    ).fetchall()
    return [r[0] for r in rows]


def still_expired(
    conn: Executes, ids: Sequence[str], before: str, dialect: Dialect = SQLITE
) -> list[str]:
    """The ids that are still expired tombstones now (re-checked inside each step's tx)."""
    found: list[str] = []
    for among, chunk in _chunks(ids, "id", dialect):
        found += [r[0] for r in conn.execute(
            f"SELECT id FROM memories WHERE {among} AND {_expired(dialect)}", (*chunk, before)
        ).fetchall()]
    return found


def count_mention_links(conn: Executes, ids: Sequence[str], dialect: Dialect = SQLITE) -> int:
    total = 0
    for among, chunk in _chunks(ids, "memory_id", dialect):
        total += int(conn.execute(
            f"SELECT count(*) FROM memory_entity_mentions WHERE {among}", chunk
        ).fetchone()[0])
    return total


def _orphan_hashes_sql(among: str, dialect: Dialect) -> str:
    # A vector is keyed by content hash; a live memory (re-added after the delete) or a
    # tombstone not yet expired may share it, and then it stays. Tombstones that have expired
    # too do not hold it, whether or not they are in this chunk of ids: two of them sharing a
    # hash in different chunks would otherwise keep each other's vector after both are gone.
    return (
        f"SELECT DISTINCT m.content_hash FROM memories m WHERE {among}"
        f" AND {_expired(dialect, 'm.')} AND m.content_hash IS NOT NULL AND NOT EXISTS ("
        " SELECT 1 FROM memories o WHERE o.content_hash = m.content_hash"
        f" AND NOT ({_expired(dialect, 'o.')}))"
    )


def tombstone_vector_hashes(
    conn: Executes, ids: Sequence[str], before: str, dialect: Dialect = SQLITE
) -> list[str]:
    """Content hashes whose vector no memory but expired tombstones uses."""
    found: set[str] = set()
    for among, chunk in _chunks(ids, "m.id", dialect):
        found.update(r[0] for r in conn.execute(
            _orphan_hashes_sql(among, dialect), (*chunk, before, before)).fetchall())
    return sorted(found)


def delete_tombstones(
    conn: Executes, ids: Sequence[str], before: str, dialect: Dialect = SQLITE
) -> int:
    """Hard-delete the expired tombstones among `ids` (the FTS trigger cleans the index; the
    count comes from the id list, not from changes(), which the trigger inflates)."""
    doomed = still_expired(conn, ids, before, dialect)
    for among, chunk in _chunks(doomed, "id", dialect):
        conn.execute(
            f"DELETE FROM memories WHERE {among} AND {_expired(dialect)}", (*chunk, before))
    return len(doomed)


# --- plain time windows: history, cold rows, idempotency keys -------------------------------

# kind -> (table, row key, time column). Idempotency keys are unique per scope, not alone
# (migration 011): their rows by the dialect's row address (rowid, ctid). The ledger is keyed
# by (caller, session_id, memory_id): matched by that row value.
_WINDOWED = {
    "history": ("memory_history", "id", "created_at"),
    "cold": ("memories_cold", "id", "archived_at"),
    "idempotency_keys": ("idempotency_scoped_keys", "{row}", "created_at"),
    "hook_ledger": ("hook_injections", "caller, session_id, memory_id", "injected_at"),
}


def windowed(kind: str) -> bool:
    """Whether `kind` is a plain time window of these functions."""
    return kind in _WINDOWED


def delete_older(
    conn: Executes, kind: str, before: str, limit: int, dialect: Dialect = SQLITE
) -> int:
    """Delete at most `limit` rows of `kind` older than `before`, oldest first."""
    table, key, column = _WINDOWED[kind]
    key = key.format(row=dialect.row_address)
    cursor = conn.execute(dialect.sql(
        f"DELETE FROM {table} WHERE ({key}) IN (SELECT {key} FROM {table} WHERE {column} < ?"
        f" ORDER BY {column} LIMIT ?)"),
        (before, max(limit, 0)),
    )
    return cursor.rowcount


def count_older(
    conn: Executes, kind: str, before: str, limit: int, dialect: Dialect = SQLITE
) -> int:
    table, key, column = _WINDOWED[kind]
    row = conn.execute(dialect.sql(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {column} < ? LIMIT ?) AS t"),
        (before, max(limit, 0)),
    ).fetchone()
    return int(row[0])


def count_jobs(
    conn: Executes, status: str, before: str, limit: int, dialect: Dialect = SQLITE
) -> int:
    column = "completed_at" if status == "completed" else "failed_at"
    row = conn.execute(dialect.sql(
        f"SELECT count(*) FROM (SELECT 1 FROM memory_jobs WHERE status = ? AND {column} < ?"
        " LIMIT ?) AS t"),
        (status, before, max(limit, 0)),
    ).fetchone()
    return int(row[0])
