"""SQL for the cold tier (memories_cold): snapshots of a memory taken before it changes.

Before an update or delete applied by the pipeline (or an approved review), the
previous state of the memory is archived here in the same transaction as the change, so
nothing is lost when a fact is superseded. A snapshot is the whole memories row as JSON plus
the columns worth querying. Rows stay until retention purges them (180-day floor).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import Memory, dumps


@dataclass(frozen=True, slots=True)
class ColdRecord:
    id: int
    memory_id: str
    content: str
    snapshot: dict[str, Any]
    reason: str | None
    archived_by: str | None
    archived_at: str

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def archive(
    conn: Executes, memory: Memory, *, reason: str, archived_by: str, now: str,
    dialect: Dialect = SQLITE,
) -> int:
    """Store a snapshot of `memory` as it is now; return the cold row's id."""
    row = conn.execute(dialect.sql(
        "INSERT INTO memories_cold (memory_id, content, content_hash, type, tags, importance,"
        " snapshot, reason, archived_by, archived_at) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING id"),
        (
            memory.id, memory.content, memory.content_hash, memory.type,
            dumps(list(memory.tags)), memory.importance, dumps(memory.to_dict()), reason,
            archived_by, now,
        ),
    ).fetchone()
    return int(row[0])


def for_memory(conn: Connection, memory_id: str) -> list[ColdRecord]:
    """The snapshots of one memory, oldest first."""
    rows = conn.execute(
        "SELECT id, memory_id, content, snapshot, reason, archived_by, archived_at"
        " FROM memories_cold WHERE memory_id = ? ORDER BY id",
        (memory_id,),
    ).fetchall()
    return [
        ColdRecord(
            id=int(r["id"]), memory_id=r["memory_id"], content=r["content"],
            snapshot=json.loads(r["snapshot"]), reason=r["reason"],
            archived_by=r["archived_by"], archived_at=r["archived_at"],
        )
        for r in rows
    ]
