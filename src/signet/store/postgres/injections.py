"""The hooks' injection ledger and session-start candidates on PostgreSQL: the SQLite side's
statements in this dialect. The ledger is shared by every daemon and keyed by (caller, session,
memory), so a session moving between daemons behind a balancer is still never given a memory
twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from signet.store.dialect import POSTGRES
from signet.store.injections import forget_session, startup_candidates
from signet.store.postgres.columns import MEMORY_COLUMNS
from signet.types import Memory

__all__ = ["PostgresInjections"]


class PostgresInjections:
    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def injected(self, caller: str, session_id: str, memory_ids: Sequence[str]) -> set[str]:
        if not memory_ids:
            return set()
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT memory_id FROM hook_injections WHERE caller = %s AND session_id = %s"
                " AND memory_id = ANY(%s)", (caller, session_id, list(memory_ids)),
            ).fetchall()
        return {str(r[0]) for r in rows}

    def record(
        self, caller: str, session_id: str, memory_ids: Sequence[str], event: str, now: str
    ) -> None:
        if not memory_ids:
            return
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO hook_injections (caller, session_id, memory_id, event, injected_at)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(caller, session_id, memory_id, event, now) for memory_id in memory_ids],
            )

    def forget_session(self, caller: str, session_id: str) -> int:
        with self.pool.connection() as conn:
            return forget_session(conn, caller, session_id, POSTGRES)

    def startup_candidates(
        self, *, agent_id: str, project: str | None, limit: int
    ) -> list[Memory]:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            return startup_candidates(cur, agent_id=agent_id, project=project, limit=limit,
                                      dialect=POSTGRES, columns=MEMORY_COLUMNS)
