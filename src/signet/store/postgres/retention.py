"""The retention sweep's steps on PostgreSQL (store/operations.py `RetentionStore`), the SQL of
store/retention.py and store/jobs.py `purge` in this dialect.

Every delete carries its own expiry condition, as on SQLite, so a memory recovered between two
steps is never touched. `exclusive` is a session advisory lock held on one pooled connection
for the whole sweep: of several daemons whose retention workers come due at once, one sweeps
and the others skip (`pg_try_advisory_lock`, never waiting), so the work is done once.

Every step of store/retention.py has its table here (a step whose table a backend lacks would
answer None, and the sweep would name it as not on this backend).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import psycopg
from psycopg_pool import ConnectionPool

from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres.graph import PgGraphOps

__all__ = ["PgRetention", "lock_key"]

_EXPIRED = "is_deleted AND deleted_at IS NOT NULL AND deleted_at < %s"
# kind -> (table, row key, time column), the kinds of store/retention.py on this backend;
# the ledger has no id of its own and idempotency keys are unique per scope, not alone: their
# rows by ctid.
_WINDOWED = {
    "history": ("memory_history", "id", "created_at"),
    "cold": ("memories_cold", "id", "archived_at"),
    "hook_ledger": ("hook_injections", "ctid", "injected_at"),
    "idempotency_keys": ("idempotency_scoped_keys", "ctid", "created_at"),
}


def lock_key(name: str) -> int:
    """The advisory-lock key of a named one-at-a-time task (a signed 64-bit int)."""
    return int.from_bytes(hashlib.sha256(f"signet:{name}".encode()).digest()[:8], "big", signed=True)


def _orphan_hashes(conn: psycopg.Connection, ids: Sequence[str], before: str) -> list[str]:
    # A vector is keyed by content hash: it stays while any memory but an expired tombstone
    # holds it (store/retention.py _orphan_hashes_sql).
    rows = conn.execute(
        f"SELECT DISTINCT m.content_hash FROM memories m WHERE m.id = ANY(%s) AND m.{_EXPIRED}"
        " AND m.content_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memories o WHERE"
        " o.content_hash = m.content_hash AND NOT (o.is_deleted AND o.deleted_at IS NOT NULL"
        " AND o.deleted_at < %s))", (list(ids), before, before),
    ).fetchall()
    return sorted(str(r[0]) for r in rows)


class PgRetention:
    pool: ConnectionPool

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        return self._exclusive(name)

    @contextmanager
    def _exclusive(self, name: str) -> Iterator[bool]:
        key = lock_key(name)
        with self.pool.connection() as conn:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            held = bool(row and row[0])
            try:
                yield held
            finally:
                if held:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def expired_tombstones(self, before: str, limit: int) -> list[str]:
        with self.pool.connection() as conn:
            rows = conn.execute(
                f"SELECT id FROM memories WHERE {_EXPIRED} ORDER BY deleted_at, id LIMIT %s",
                (before, max(limit, 0)),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def purge_graph_links(self, ids: Sequence[str], before: str) -> dict[str, int] | None:
        """The graph's decrement_entity_mentions (store/graph_store.py): the expired
        tombstones' mention links dropped (the delete of step 3 would cascade them, but not the
        counts), each linked entity's `mentions` decremented, the entities left with none
        deleted."""
        with self.pool.connection() as conn, conn.transaction():
            live = [str(r[0]) for r in conn.execute(
                f"SELECT id FROM memories WHERE id = ANY(%s) AND {_EXPIRED}", (list(ids), before),
            ).fetchall()]
            # The graph's own statement (store/postgres/graph.py), in this transaction.
            return PgGraphOps(conn).decrement_entity_mentions(live)

    def purge_tombstone_vectors(self, ids: Sequence[str], before: str) -> int:
        with self.pool.connection() as conn, conn.transaction():
            hashes = _orphan_hashes(conn, ids, before)
            if not hashes:
                return 0
            return conn.execute(
                "DELETE FROM embeddings WHERE content_hash = ANY(%s)", (hashes,)
            ).rowcount

    def delete_tombstones(self, ids: Sequence[str], before: str) -> int:
        with self.pool.connection() as conn:
            return conn.execute(
                f"DELETE FROM memories WHERE id = ANY(%s) AND {_EXPIRED}", (list(ids), before)
            ).rowcount

    def purge_jobs(
        self, now: str, *, completed_before: str, dead_before: str, limit: int
    ) -> tuple[int, int]:
        with self.pool.connection() as conn, conn.transaction():
            return pg_jobs.purge(conn, now, completed_before=completed_before,
                                 dead_before=dead_before, limit=limit)

    def delete_older(self, kind: str, before: str, limit: int) -> int | None:
        if kind not in _WINDOWED:
            return None
        table, key, column = _WINDOWED[kind]
        with self.pool.connection() as conn:
            return conn.execute(
                f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} WHERE {column} < %s"
                f" ORDER BY {column} LIMIT %s)", (before, max(limit, 0)),
            ).rowcount

    def count_mention_links(self, ids: Sequence[str]) -> int | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM memory_entity_mentions WHERE memory_id = ANY(%s)",
                (list(ids),),
            ).fetchone()
        return int(row[0]) if row else 0

    def count_tombstone_vectors(self, ids: Sequence[str], before: str) -> int:
        with self.pool.connection() as conn:
            return len(_orphan_hashes(conn, ids, before))

    def count_older(self, kind: str, before: str, limit: int) -> int | None:
        if kind not in _WINDOWED:
            return None
        table, _key, column = _WINDOWED[kind]
        with self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {column} < %s LIMIT %s) AS t",
                (before, max(limit, 0)),
            ).fetchone()
        return int(row[0]) if row else 0

    def count_jobs(self, status: str, before: str, limit: int) -> int:
        with self.pool.connection() as conn:
            return pg_jobs.count_older(conn, status, before, limit)
