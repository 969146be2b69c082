"""Idempotent remember: a retry with the same key and content gets the first answer back.

A key lives in the namespace of the caller's scope (structured, so no two scopes share keys and
no key can spell another scope's namespace). The first answer is stored as JSON beside the key
(store/idempotency.py) in the write transaction that made it; a replay rebuilds it unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from signet.errors import Conflict, InvalidInput
from signet.normalize import NormalizedContent
from signet.store import idempotency as idem_sql
from signet.store.idempotency import KeySpace
from signet.types import Memory, MemoryScope, RememberResult, dumps

__all__ = ["KeySpace", "key_space", "record", "replay"]


def key_space(key: str | None, scope: MemoryScope | None) -> KeySpace | None:
    """The key in the namespace of the caller's scope; None without a key."""
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip() or len(key) > 200:
        raise InvalidInput("idempotency_key must be a non-empty string of at most 200 characters")
    if scope is None:
        return KeySpace(key)
    return KeySpace(key, scope.agent_id, scope.project)


def replay(conn: Any, space: KeySpace, norm: NormalizedContent) -> RememberResult | None:
    """The first answer under the key, for a retry of the same content; a Conflict that names
    nothing of the first request when the content differs."""
    recorded = idem_sql.get(conn, space)
    if recorded is None:
        return None
    if recorded.content_hash != norm.content_hash:
        raise Conflict(
            "this idempotency_key was already used for different content; use a new key",
            code="idempotency_key_reused",
        )
    return _replayed(recorded.response)


def record(
    conn: Any, space: KeySpace, norm: NormalizedContent, result: RememberResult, now: str
) -> None:
    """Keep `result` as the answer under the key, in the transaction that made it."""
    idem_sql.put(
        conn, space, content_hash=norm.content_hash, memory_id=result.id,
        response=_result_json(result), now=now,
    )


def _result_json(result: RememberResult) -> str:
    return dumps({"id": result.id, "deduped": result.deduped, "embedded": result.embedded,
                  "memory": result.memory.to_dict()})


def _replayed(response: str) -> RememberResult:
    """The result recorded under an idempotency key: the first call's answer, as it was."""
    data = json.loads(response)
    fields = {k: v for k, v in data["memory"].items() if k in Memory.__dataclass_fields__}
    memory = Memory(**{**fields, "tags": tuple(fields["tags"])})
    return RememberResult(data["id"], data["deduped"], memory, embedded=data["embedded"])
