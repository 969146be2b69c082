"""The immutable audit trail (memory_history): one row per mutation or pipeline proposal.

Both stores write and read it with these statements, each in its dialect (store/dialect.py)."""

from __future__ import annotations

import json
from typing import Any

from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.memories import new_id
from signet.types import Actor, HistoryEvent, dumps


def record(
    conn: Executes,
    memory_id: str,
    event: str,
    actor: Actor,
    now: str,
    *,
    old_content: str | None = None,
    new_content: str | None = None,
    reason: str | None = None,
    metadata: dict[str, Any] | None = None,
    dialect: Dialect = SQLITE,
) -> str:
    history_id = new_id()
    conn.execute(dialect.sql(
        "INSERT INTO memory_history (id, memory_id, event, old_content, new_content, changed_by,"
        " reason, metadata, actor_type, session_id, request_id, created_at, token_id)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        (
            history_id, memory_id, event, old_content, new_content, actor.name, reason,
            dumps(metadata) if metadata is not None else None, actor.type, actor.session_id,
            actor.request_id, now, actor.token_id,
        ),
    )
    return history_id


def for_memory(
    conn: Executes, memory_id: str, *, dialect: Dialect = SQLITE
) -> list[HistoryEvent]:
    """The memory's events, oldest first (rows read by column name: on PostgreSQL through a
    dict_row cursor)."""
    rows = conn.execute(dialect.sql(
        "SELECT * FROM memory_history WHERE memory_id = ?"
        f" ORDER BY created_at, {dialect.insertion_order}"),
        (memory_id,),
    ).fetchall()
    return [
        HistoryEvent(
            id=r["id"], memory_id=r["memory_id"], event=r["event"],
            old_content=r["old_content"], new_content=r["new_content"],
            changed_by=r["changed_by"], reason=r["reason"],
            metadata=json.loads(r["metadata"]) if r["metadata"] else None,
            actor_type=r["actor_type"], session_id=r["session_id"],
            request_id=r["request_id"], created_at=r["created_at"], token_id=r["token_id"],
        )
        for r in rows
    ]
