"""Idempotent remember: a retry with the same key and content gets the first answer back.

A key lives in the namespace of the caller's scope (structured, so no two scopes share keys and
no key can spell another scope's namespace). The first answer is stored as JSON beside the key
(store/idempotency.py) in the write transaction that made it (the store's `write_memory`, on
either backend); a replay rebuilds it unchanged.
"""

from __future__ import annotations

from signet.errors import Conflict, InvalidInput
from signet.normalize import NormalizedContent
from signet.store import idempotency as idem_sql
from signet.store.idempotency import KeySpace, Recorded
from signet.types import MemoryScope, RememberResult

__all__ = ["KeySpace", "key_space", "replay"]


def key_space(key: str | None, scope: MemoryScope | None) -> KeySpace | None:
    """The key in the namespace of the caller's scope; None without a key."""
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip() or len(key) > 200:
        raise InvalidInput("idempotency_key must be a non-empty string of at most 200 characters")
    if scope is None:
        return KeySpace(key)
    return KeySpace(key, scope.agent_id, scope.project)


def replay(recorded: Recorded | None, norm: NormalizedContent) -> RememberResult | None:
    """The first answer under the key (`recorded`, read by the store), for a retry of the same
    content; a Conflict that names nothing of the first request when the content differs."""
    if recorded is None:
        return None
    if recorded.content_hash != norm.content_hash:
        raise Conflict(
            "this idempotency_key was already used for different content; use a new key",
            code="idempotency_key_reused",
        )
    return idem_sql.replayed_result(recorded.response)
