"""SQL for the harness hooks: the per-session injection ledger and the session-start candidates. The
ledger is kept per caller (the hook's token) and session, so another token sending the same
session id neither hides memories from it nor repeats them. The candidates are three bounded
index scans (pinned, the project's most important, everyone's most important); the caller scores
them in Python, where the decay clock is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.memories import COLUMNS, row_to_memory
from signet.types import Memory

__all__ = [
    "InjectionStore", "SqliteInjections", "forget_session", "injected",
    "record", "startup_candidates",
]


class InjectionStore(Protocol):
    """The hooks' reads and writes (injection/ledger.py, injection/session_start.py), one
    transaction each, on either backend."""

    def injected(self, caller: str, session_id: str, memory_ids: Sequence[str]) -> set[str]: ...

    def record(
        self, caller: str, session_id: str, memory_ids: Sequence[str], event: str, now: str
    ) -> None: ...

    def forget_session(self, caller: str, session_id: str) -> int: ...

    def startup_candidates(
        self, *, agent_id: str, project: str | None, limit: int
    ) -> list[Memory]: ...


class SqliteInjections:
    """InjectionStore on the workspace's SQLite store: the functions below."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def injected(self, caller: str, session_id: str, memory_ids: Sequence[str]) -> set[str]:
        return injected(self.store.reader(), caller, session_id, memory_ids)

    def record(
        self, caller: str, session_id: str, memory_ids: Sequence[str], event: str, now: str
    ) -> None:
        with self.store.write_tx() as conn:
            record(conn, caller, session_id, memory_ids, event, now)

    def forget_session(self, caller: str, session_id: str) -> int:
        with self.store.write_tx() as conn:
            return forget_session(conn, caller, session_id)

    def startup_candidates(
        self, *, agent_id: str, project: str | None, limit: int
    ) -> list[Memory]:
        return startup_candidates(self.store.reader(), agent_id=agent_id, project=project,
                                  limit=limit)


def injected(
    conn: Connection, caller: str, session_id: str, memory_ids: Sequence[str]
) -> set[str]:
    """Which of `memory_ids` this caller's session has already been given."""
    if not memory_ids:
        return set()
    rows = conn.execute(
        "SELECT l.memory_id FROM json_each(?) AS j CROSS JOIN hook_injections l"
        " ON l.caller = ? AND l.session_id = ? AND l.memory_id = j.value",
        (_json_list(memory_ids), caller, session_id),
    ).fetchall()
    return {row[0] for row in rows}


def record(
    conn: Connection, caller: str, session_id: str, memory_ids: Iterable[str], event: str,
    now: str,
) -> None:
    """Remember that this caller's `session_id` was given `memory_ids` (a repeat is ignored)."""
    conn.executemany(
        "INSERT OR IGNORE INTO hook_injections (caller, session_id, memory_id, event, injected_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [(caller, session_id, memory_id, event, now) for memory_id in memory_ids],
    )


def startup_candidates(
    conn: Executes, *, agent_id: str, project: str | None, limit: int,
    dialect: Dialect = SQLITE, columns: str = COLUMNS,
) -> list[Memory]:
    """Live memories worth a seat at session start: every pinned one (up to `limit`), the
    project's most important, then everyone's most important; duplicates removed, order kept.
    `columns` are the memories columns (`memories m`) as `row_to_memory` reads them."""
    q = dialect.mark
    live = (f"{dialect.no('m.is_deleted')} AND m.agent_id = {q}"
            " AND m.type NOT IN ('document_chunk')")
    queries: list[tuple[str, tuple[object, ...]]] = [
        (f"{live} AND {dialect.yes('m.pinned')} ORDER BY m.updated_at DESC", (agent_id,)),
    ]
    if project:
        queries.append((f"{live} AND m.project = {q} ORDER BY m.importance DESC,"
                        " m.updated_at DESC", (agent_id, project)))
    queries.append((f"{live} ORDER BY m.importance DESC, m.updated_at DESC", (agent_id,)))
    seen: dict[str, Memory] = {}
    for where, params in queries:
        rows = conn.execute(
            f"SELECT {columns} FROM memories m WHERE {where} LIMIT {q}", (*params, limit)
        ).fetchall()
        for row in rows:
            seen.setdefault(row["id"], row_to_memory(row))
    return list(seen.values())


def _json_list(values: Sequence[str]) -> str:
    import json

    return json.dumps(list(values))


def forget_session(
    conn: Executes, caller: str, session_id: str, dialect: Dialect = SQLITE
) -> int:
    """Drop this caller's ledger of a session (its context was cleared or compacted away)."""
    return int(conn.execute(
        dialect.sql("DELETE FROM hook_injections WHERE caller = ? AND session_id = ?"),
        (caller, session_id),
    ).rowcount)
