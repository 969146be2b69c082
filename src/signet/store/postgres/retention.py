"""The retention sweep's steps on PostgreSQL: store/retention.py's statements in this dialect, each
delete carrying its own expiry condition. `exclusive` holds a session advisory lock for the whole
sweep (`pg_try_advisory_lock`, never waiting), so of several daemons due at once one sweeps and
the others skip.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import psycopg
from psycopg_pool import ConnectionPool

from signet.store import retention
from signet.store.dialect import POSTGRES
from signet.store.operations import SharedOps
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres.graph import PostgresGraphOps

__all__ = ["PostgresRetention", "lock_key", "try_lock"]


def lock_key(name: str) -> int:
    """The advisory-lock key of a named one-at-a-time task (a signed 64-bit int)."""
    return int.from_bytes(hashlib.sha256(f"signet:{name}".encode()).digest()[:8], "big", signed=True)


@contextmanager
def try_lock(conn: psycopg.Connection, name: str) -> Iterator[bool]:
    """Hold the session advisory lock of task `name` on `conn` for the block, if no other
    session holds it: True when held (released after), False at once when another holds it."""
    key = lock_key(name)
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
    held = bool(row and row[0])
    try:
        yield held
    finally:
        if held:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


class PostgresRetention(SharedOps):
    pool: ConnectionPool
    dialect = POSTGRES

    def _conn(self) -> AbstractContextManager[psycopg.Connection]:
        return self.pool.connection()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        return self._exclusive(name)

    @contextmanager
    def _exclusive(self, name: str) -> Iterator[bool]:
        with self.pool.connection() as conn, try_lock(conn, name) as held:
            yield held

    def purge_graph_links(self, ids: Sequence[str], before: str) -> dict[str, int] | None:
        """The graph's decrement_entity_mentions (store/graph_store.py): the expired
        tombstones' mention links dropped (the delete of step 3 would cascade them, but not the
        counts), each linked entity's `mentions` decremented, the entities left with none
        deleted."""
        with self._tx() as conn:
            live = retention.still_expired(conn, ids, before, POSTGRES)
            # The graph's own statement (store/postgres/graph.py), in this transaction.
            return PostgresGraphOps(conn).decrement_entity_mentions(live)

    def purge_jobs(
        self, now: str, *, completed_before: str, dead_before: str, limit: int
    ) -> tuple[int, int]:
        with self._tx() as conn:
            return pg_jobs.purge(conn, now, completed_before=completed_before,
                                 dead_before=dead_before, limit=limit)

    def delete_older(self, kind: str, before: str, limit: int) -> int | None:
        if not retention.windowed(kind):
            return None
        with self._conn() as conn:
            return retention.delete_older(conn, kind, before, limit, POSTGRES)

    def count_older(self, kind: str, before: str, limit: int) -> int | None:
        if not retention.windowed(kind):
            return None
        with self._conn() as conn:
            return retention.count_older(conn, kind, before, limit, POSTGRES)
