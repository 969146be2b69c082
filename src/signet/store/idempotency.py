"""SQL for idempotency keys: a retried write with the same `idempotency_key` gets the first response
back. Check and record run in the caller's write transaction. A key's namespace is the caller's
scope as columns (agent, project), never a joined string two scopes could spell alike, and only
the same content gets the replay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from signet.store.connection import Connection
from signet.types import Memory, RememberResult, dumps

__all__ = ["KeySpace", "Recorded", "get", "put", "replayed_result", "result_json"]


@dataclass(frozen=True, slots=True)
class KeySpace:
    """A key inside the scope that used it (None: that dimension is not constrained)."""

    key: str
    agent: str | None = None
    project: str | None = None


@dataclass(frozen=True, slots=True)
class Recorded:
    content_hash: str
    response: str


_WHERE = (
    "key = ? AND IFNULL(scope_agent, x'') = IFNULL(?, x'')"
    " AND IFNULL(scope_project, x'') = IFNULL(?, x'')"
)


def get(conn: Connection, space: KeySpace) -> Recorded | None:
    """What was recorded under the key in its namespace, or None when the key is new there."""
    row = conn.execute(
        f"SELECT content_hash, response FROM idempotency_scoped_keys WHERE {_WHERE}",
        (space.key, space.agent, space.project),
    ).fetchone()
    return Recorded(row[0], row[1]) if row else None


def put(
    conn: Connection, space: KeySpace, *, content_hash: str, memory_id: str | None,
    response: str, now: str,
) -> None:
    """Record the response for the key; the first record of a key in its namespace wins."""
    conn.execute(
        "INSERT OR IGNORE INTO idempotency_scoped_keys (key, scope_agent, scope_project,"
        " content_hash, memory_id, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (space.key, space.agent, space.project, content_hash, memory_id, response, now),
    )


def result_json(result: RememberResult) -> str:
    """The answer kept under a key (both backends store this text)."""
    return dumps({"id": result.id, "deduped": result.deduped, "embedded": result.embedded,
                  "memory": result.memory.to_dict()})


def replayed_result(response: str) -> RememberResult:
    """The result recorded under an idempotency key: the first call's answer, as it was."""
    data = json.loads(response)
    fields = {k: v for k, v in data["memory"].items() if k in Memory.__dataclass_fields__}
    memory = Memory(**{**fields, "tags": tuple(fields["tags"])})
    return RememberResult(data["id"], data["deduped"], memory, embedded=data["embedded"])
