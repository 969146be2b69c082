"""The hooks' injection ledger and session-start candidates on PostgreSQL: the SQLite side's
statements in this dialect. The ledger is shared by every daemon and keyed by (caller, session,
memory), so a session moving between daemons behind a balancer is still never given a memory
twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from signet.store.memories import row_to_memory
from signet.store.postgres.columns import MEMORY_COLUMNS
from signet.types import Memory

__all__ = ["PostgresInjections"]

_LIVE = "NOT m.is_deleted AND m.agent_id = %s AND m.type NOT IN ('document_chunk')"


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
            return conn.execute(
                "DELETE FROM hook_injections WHERE caller = %s AND session_id = %s",
                (caller, session_id),
            ).rowcount

    def startup_candidates(
        self, *, agent_id: str, project: str | None, limit: int
    ) -> list[Memory]:
        queries: list[tuple[str, tuple[object, ...]]] = [
            (f"{_LIVE} AND m.pinned ORDER BY m.updated_at DESC", (agent_id,)),
        ]
        if project:
            queries.append((f"{_LIVE} AND m.project = %s ORDER BY m.importance DESC,"
                            " m.updated_at DESC", (agent_id, project)))
        queries.append((f"{_LIVE} ORDER BY m.importance DESC, m.updated_at DESC", (agent_id,)))
        seen: dict[str, Memory] = {}
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            for where, params in queries:
                cur.execute(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} LIMIT %s",
                            (*params, limit))
                for row in cur.fetchall():
                    seen.setdefault(str(row["id"]), row_to_memory(row))  # type: ignore[arg-type]
        return list(seen.values())
