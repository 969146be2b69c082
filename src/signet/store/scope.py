"""SQL for scoped access: does a memory lie inside a token's slice (agent and/or project)?

Asked before a memory's row is read, so a caller scoped to one agent or project learns nothing
about other memories, not even their existence: the app answers "not found" for them.
"""

from __future__ import annotations

from signet.store.connection import Connection
from signet.types import MemoryScope


def contains(conn: Connection, memory_id: str, scope: MemoryScope) -> bool:
    row = conn.execute(
        "SELECT 1 FROM memories WHERE id = ?"
        " AND (? IS NULL OR agent_id = ?) AND (? IS NULL OR project = ?)",
        (memory_id, scope.agent_id, scope.agent_id, scope.project, scope.project),
    ).fetchone()
    return row is not None
