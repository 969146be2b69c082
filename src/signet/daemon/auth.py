"""Permissions on routes: `require(permission)` and the caller's `Principal`.

Authentication happens earlier, in `guards.Authenticate`, which leaves the verified `Principal` in
`request.state.principal`. Each route or router declares `Depends(require("recall"))`; `require`
answers 403 `forbidden` when the token lacks the permission and applies the per-token rate limit to
mutating calls (429). tests/daemon/test_auth.py proves every route declares one. A scoped principal
sees only its slice: routes pass `memory_scope(principal)` to the app, which applies it in SQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request

from signet.daemon.tokens import PERMISSIONS, ROLES, Principal
from signet.errors import Forbidden, RateLimited, Unauthorized
from signet.types import MemoryScope

__all__ = [
    "PERMISSIONS", "ROLES", "Caller", "Principal", "RateLimiter", "current_principal",
    "memory_scope", "require", "unscoped",
]

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Permissions whose POST routes only read (recall is a POST with a body); never rate limited.
READ_PERMISSIONS = frozenset({"recall", "diagnostics", "analytics"})
PERMISSION_ATTR = "signet_permission"


async def current_principal(request: Request) -> Principal:
    """The verified caller (set by guards.Authenticate); 401 when there is none."""
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):
        raise Unauthorized("a bearer token is required (Authorization: Bearer <token>)")
    return principal


Caller = Annotated[Principal, Depends(current_principal)]


def require(permission: str) -> Callable[[Request], Awaitable[Principal]]:
    """A dependency admitting only principals holding `permission` (ValueError at import time
    for a name that is not a permission, so a typo cannot leave a route open)."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r} (one of {', '.join(PERMISSIONS)})")

    async def check(request: Request) -> Principal:
        principal = await current_principal(request)
        if not principal.allows(permission):
            raise Forbidden(f"this token lacks the {permission} permission")
        if request.method in MUTATING_METHODS and permission not in READ_PERMISSIONS:
            limiter = getattr(request.app.state, "rate_limiter", None)
            if limiter is not None:
                limiter.check(principal.token_id)
        return principal

    check.__name__ = f"require_{permission}"
    setattr(check, PERMISSION_ATTR, permission)
    return check


def memory_scope(principal: Principal) -> MemoryScope | None:
    """The slice of memory a principal may touch, or None for all of it."""
    if not principal.scoped:
        return None
    return MemoryScope(agent_id=principal.scope_agent, project=principal.scope_project)


class RateLimiter:
    """A token bucket per token id: `per_minute` calls, refilled continuously."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def check(self, key: str) -> None:
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens < 1:
                wait = (1 - tokens) / self.rate
                self._buckets[key] = (tokens, now)
                raise RateLimited(
                    f"rate limit reached for this token; retry in {wait:.1f}s", retry_after=wait
                )
            self._buckets[key] = (tokens - 1, now)


async def unscoped(request: Request) -> Principal:
    """For routes that read across agents and projects (the knowledge graph, maintenance): a
    scoped token gets 403 instead of a view wider than its slice."""
    principal = await current_principal(request)
    if principal.scoped:
        raise Forbidden("this route spans every agent and project; a scoped token cannot use it")
    return principal

