"""SQL for the harness hooks: the per-session injection ledger and the session-start candidates.

The ledger (migration 025) holds which memories a session has already been given, so the hooks
never inject one twice in a session. The candidates of session-start are read in three bounded
index scans (pinned, the project's most important, everyone's most important); the caller
scores them (importance x decay, pinned = 1, project first) in Python, where the decay clock is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from signet.store.connection import Connection
from signet.store.memories import COLUMNS, row_to_memory
from signet.types import Memory

__all__ = ["forget_session", "injected", "record", "startup_candidates"]


def injected(conn: Connection, session_id: str, memory_ids: Sequence[str]) -> set[str]:
    """Which of `memory_ids` this session has already been given."""
    if not memory_ids:
        return set()
    rows = conn.execute(
        "SELECT l.memory_id FROM json_each(?) AS j CROSS JOIN hook_injections l"
        " ON l.session_id = ? AND l.memory_id = j.value",
        (_json_list(memory_ids), session_id),
    ).fetchall()
    return {row[0] for row in rows}


def record(
    conn: Connection, session_id: str, memory_ids: Iterable[str], event: str, now: str
) -> None:
    """Remember that `session_id` was given `memory_ids` (a repeat is ignored)."""
    conn.executemany(
        "INSERT OR IGNORE INTO hook_injections (session_id, memory_id, event, injected_at)"
        " VALUES (?, ?, ?, ?)",
        [(session_id, memory_id, event, now) for memory_id in memory_ids],
    )


def startup_candidates(
    conn: Connection, *, agent_id: str, project: str | None, limit: int
) -> list[Memory]:
    """Live memories worth a seat at session start: every pinned one (up to `limit`), the
    project's most important, then everyone's most important; duplicates removed, order kept."""
    live = "is_deleted = 0 AND agent_id = ? AND type NOT IN ('document_chunk')"
    queries: list[tuple[str, tuple[object, ...]]] = [
        (f"{live} AND pinned = 1 ORDER BY updated_at DESC", (agent_id,)),
    ]
    if project:
        queries.append((f"{live} AND project = ? ORDER BY importance DESC, updated_at DESC", (agent_id, project)))
    queries.append((f"{live} ORDER BY importance DESC, updated_at DESC", (agent_id,)))
    seen: dict[str, Memory] = {}
    for where, params in queries:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE {where} LIMIT ?", (*params, limit)
        ).fetchall()
        for row in rows:
            seen.setdefault(row["id"], row_to_memory(row))
    return list(seen.values())


def _json_list(values: Sequence[str]) -> str:
    import json

    return json.dumps(list(values))


def forget_session(conn: Connection, session_id: str) -> int:
    """Drop a session's ledger (its context was cleared or compacted away)."""
    return conn.execute("DELETE FROM hook_injections WHERE session_id = ?", (session_id,)).rowcount
