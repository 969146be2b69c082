"""Batch forget and batch modify: many memories in one call, each through the one write path in its
own transaction, reported per item.

Forgetting takes two steps: `preview` returns the match and a confirm token, and `execute` proceeds
only when the token fits the match recomputed then, within CONFIRM_TTL_S. A query matches memories
holding every word of it, never ranked recall, which would sweep in look-alikes; at most
MAX_BATCH.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from signet.errors import Conflict, InvalidInput, NotFound, SignetError
from signet.types import Actor, Memory, MemoryFilters, MemoryScope

if TYPE_CHECKING:
    from signet.services.memory import MemoryService

__all__ = ["CONFIRM_TTL_S", "MAX_BATCH", "forget_batch", "modify_batch"]

MAX_BATCH = 200
CONFIRM_TTL_S = 600


def forget_batch(
    service: MemoryService,
    key: bytes,
    *,
    ids: Sequence[str] | None = None,
    query: str | None = None,
    filters: MemoryFilters = MemoryFilters(),
    mode: str = "preview",
    confirm_token: str | None = None,
    force: bool = False,
    reason: str | None = None,
    actor: Actor = Actor(),
    scope: MemoryScope | None = None,
) -> dict[str, Any]:
    """`filters` arrive already narrowed to `scope` (SignetApp.forget_batch); ids outside the
    scope count as missing, exactly like unknown ones. `key` signs the confirm token."""
    if mode not in ("preview", "execute"):
        raise InvalidInput("mode must be preview or execute")
    matched, missing, capped = _match(service, ids, query, filters, scope)
    matched_ids = [m.id for m in matched]
    if mode == "preview":
        return {
            "mode": "preview", "count": len(matched), "capped": capped,
            "memories": [m.to_dict() for m in matched], "missing": missing,
            "pinned": [m.id for m in matched if m.pinned],
            "confirm_token": _token(key, matched_ids, force, service.clock.now().timestamp()),
        }
    service.check_mutable()
    _check_token(key, confirm_token, matched_ids, force, service.clock.now().timestamp())
    results = [_forget_one(service, memory_id, force, reason, actor, scope) for memory_id in matched_ids]
    return _outcome("execute", results, missing=missing)


def modify_batch(
    service: MemoryService, items: Sequence[dict[str, Any]], *, reason: str | None = None,
    actor: Actor = Actor(), scope: MemoryScope | None = None,
) -> dict[str, Any]:
    """items: [{id, changes: {...}, version?, reason?}]; each applied on its own."""
    if not items:
        raise InvalidInput("items: at least one item is required")
    if len(items) > MAX_BATCH:
        raise InvalidInput(f"items: at most {MAX_BATCH} per batch, got {len(items)}")
    service.check_mutable()
    results = []
    for item in items:
        memory_id = str(item["id"])
        try:
            memory = service.modify(
                memory_id, dict(item.get("changes") or {}), actor=actor,
                expected_version=item.get("version"), reason=item.get("reason") or reason,
                scope=scope,
            )
        except SignetError as exc:
            results.append(_failed(memory_id, exc))
        else:
            results.append({"id": memory_id, "ok": True, "memory": memory.to_dict()})
    return _outcome("modify", results)


# --- matching --------------------------------------------------------------------------------


def _match(
    service: MemoryService, ids: Sequence[str] | None, query: str | None, filters: MemoryFilters,
    scope: MemoryScope | None,
) -> tuple[list[Memory], list[str], bool]:
    """(live memories matched, ids not found or already deleted, whether the match was capped)."""
    if ids is not None and query is not None:
        raise InvalidInput("give ids or a query, not both")
    if ids is not None:
        return _by_ids(service, ids, scope)
    if query is not None and query.strip():
        ids = service.core.match_all(query, filters, MAX_BATCH + 1)
        memories = [service.get(memory_id, scope=scope) for memory_id in ids[:MAX_BATCH]]
        return memories, [], len(ids) > MAX_BATCH
    # Filters that only restate the caller's scope select everything it can see: refused.
    # (`isolated` only says how a scoped caller's recall ranks; it selects nothing.)
    nothing = MemoryFilters(
        agent_id=scope.agent_id if scope else None, project=scope.project if scope else None,
        isolated=filters.isolated,
    )
    if filters == nothing:
        raise InvalidInput("give ids, a query or at least one filter (refusing to match everything)")
    page = service.list(filters, limit=MAX_BATCH, scope=scope)
    return list(page.items), [], page.total > MAX_BATCH


def _by_ids(
    service: MemoryService, ids: Sequence[str], scope: MemoryScope | None
) -> tuple[list[Memory], list[str], bool]:
    unique = list(dict.fromkeys(str(i) for i in ids))
    if not unique:
        raise InvalidInput("ids: at least one id is required")
    if len(unique) > MAX_BATCH:
        raise InvalidInput(f"ids: at most {MAX_BATCH} per batch, got {len(unique)}")
    found: list[Memory] = []
    missing: list[str] = []
    for memory_id in unique:
        try:
            memory = service.get(memory_id, scope=scope)
        except NotFound:
            missing.append(memory_id)
            continue
        if memory.is_deleted:
            missing.append(memory_id)
        else:
            found.append(memory)
    return found, missing, False


# --- the confirm token -------------------------------------------------------------------------


def _token(key: bytes, ids: Sequence[str], force: bool, issued_at: float) -> str:
    stamp = str(int(issued_at))
    return f"{stamp}.{_mac(key, ids, force, stamp)}"


def _mac(key: bytes, ids: Sequence[str], force: bool, stamp: str) -> str:
    message = "\n".join(["forget", stamp, f"force={force}", *sorted(ids)]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:40]


def _check_token(
    key: bytes, token: str | None, ids: Sequence[str], force: bool, now: float
) -> None:
    if not token:
        raise InvalidInput("confirm_token: required for execute (run a preview first)")
    stamp, _, mac = token.partition(".")
    if not stamp.isdigit() or not hmac.compare_digest(mac, _mac(key, ids, force, stamp)):
        raise Conflict(
            "confirm_token does not match what this request selects now (the memories changed"
            " since the preview, force differs, or the token is not from this daemon);"
            " preview again", code="confirm_mismatch",
        )
    if now - int(stamp) > CONFIRM_TTL_S:
        raise Conflict(f"confirm_token expired (valid {CONFIRM_TTL_S} s); preview again",
                       code="confirm_expired")


# --- results -----------------------------------------------------------------------------------


def _forget_one(
    service: MemoryService, memory_id: str, force: bool, reason: str | None, actor: Actor,
    scope: MemoryScope | None,
) -> dict[str, Any]:
    try:
        memory = service.forget(memory_id, actor=actor, force=force, reason=reason, scope=scope)
    except SignetError as exc:
        return _failed(memory_id, exc)
    return {"id": memory_id, "ok": True, "memory": memory.to_dict()}


def _failed(memory_id: str, exc: SignetError) -> dict[str, Any]:
    return {"id": memory_id, "ok": False, "error": {"code": exc.code, "message": exc.message}}


def _outcome(mode: str, results: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    done = sum(1 for r in results if r["ok"])
    return {"mode": mode, "count": len(results), "succeeded": done,
            "failed": len(results) - done, "results": results, **extra}
