"""Permissions and scope for everything served at /mcp.

`guard_mcp` adds an MCP server middleware that checks every inbound message against mcp_access.py,
answers the list methods with only what the caller may use, rate-limits the writing tools and makes
the principal's scope current. `ScopedAppBackend` routes a scoped principal's calls through
`ScopedApp`, so one agent's MCP session never reads another's memories.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST, CallToolResult, TextContent

from signet.app import SignetApp
from signet.daemon import mcp_access
from signet.daemon.auth import RateLimiter
from signet.daemon.tokens import Principal
from signet.errors import Forbidden, SignetError
from signet.mcp.backends import AppBackend
from signet.types import Actor, MemoryScope

__all__ = ["ScopedApp", "ScopedAppBackend", "guard_mcp"]

READ_TOOL_PERMISSIONS = frozenset({"recall", "diagnostics", "analytics"})

_scope: ContextVar[MemoryScope | None] = ContextVar("signet_mcp_scope", default=None)
_token: ContextVar[str | None] = ContextVar("signet_mcp_token", default=None)


def guard_mcp(server: MCPServer, limiter_of: Callable[[], RateLimiter | None]) -> None:
    """Check every MCP message against the calling token (see module doc); `limiter_of`
    gives the per-token rate limiter at each call."""

    async def check(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        principal = _principal_of(ctx)
        refused = mcp_access.refusal(principal, ctx.method, ctx.params)
        if refused is None and ctx.method == "tools/call":
            refused = _rate_limited(principal, str((ctx.params or {}).get("name", "")),
                                    limiter_of())
        if refused is not None:
            return _refusal(ctx, refused)
        scope = (
            MemoryScope(agent_id=principal.scope_agent, project=principal.scope_project)
            if principal.scoped else None
        )
        token, token_id = _scope.set(scope), _token.set(principal.token_id)
        try:
            result = await call_next(ctx)
        finally:
            _scope.reset(token)
            _token.reset(token_id)
        return mcp_access.visible(principal, ctx.method, result)

    server.middleware.append(check)


def _rate_limited(principal: Principal, tool: str, limiter: RateLimiter | None) -> str | None:
    """The per-token write budget, spent by the tools that write."""
    rule = mcp_access.TOOLS.get(tool)
    permission = rule.permission if rule is not None else "admin"
    if limiter is None or permission in READ_TOOL_PERMISSIONS:
        return None
    try:
        limiter.check(principal.token_id)
    except SignetError as exc:
        return exc.message
    return None


def _refusal(ctx: ServerRequestContext[Any, Any], message: str) -> HandlerResult:
    """A refused tool call is a tool error the agent can read (as the tools' own SignetErrors
    become); a refused notification is dropped; any other request is a JSON-RPC error."""
    if ctx.method == "tools/call":
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
    if ctx.request_id is None:
        return None
    raise MCPError(code=INVALID_REQUEST, message=message)


def _principal_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    request = ctx.request
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    principal = state.get("principal")
    if not isinstance(principal, Principal):
        # Only reachable if /mcp were served without guards.Authenticate: refuse, never allow.
        raise MCPError(code=INVALID_REQUEST, message="unauthorized: a bearer token is required")
    return principal


class ScopedApp:
    """The memory operations of one SignetApp, each called with a fixed scope."""

    SCOPED = frozenset(
        {"get", "list", "recall", "remember", "modify", "forget", "recover", "history", "feedback",
         "session_search"}
    )

    def __init__(self, app: SignetApp, scope: MemoryScope) -> None:
        self._app = app
        self._scope = scope
        self.config = app.config

    def __getattr__(self, name: str) -> Any:
        if name not in self.SCOPED:
            raise AttributeError(f"{name} is not available to a scoped token")
        return functools.partial(getattr(self._app, name), scope=self._scope)


class ScopedAppBackend(AppBackend):
    """`AppBackend` whose calls honour the scope of the token that made the MCP request, and
    record its id in history."""

    @property
    def actor(self) -> Actor:  # type: ignore[override]  # a class attribute in AppBackend
        return dataclasses.replace(AppBackend.actor, token_id=_token.get())

    def _open(self, *, embedder: bool) -> SignetApp:
        scope = _scope.get()
        if scope is None:
            return self._shared
        return ScopedApp(self._shared, scope)  # type: ignore[return-value]

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None,
        session_id: str | None,
    ) -> dict[str, Any]:
        record = self._open(embedder=False).feedback(
            memory_id, feedback, actor=self.actor, correction_text=correction_text,
            session_id=session_id,
        )
        return record.to_dict()

    def context(self, *, project: str | None, cwd: str | None) -> dict[str, Any]:
        # The session-start context spans every project (pinned and important memories of
        # all of them): like the hook routes, it is for unscoped tokens only.
        if _scope.get() is not None:
            raise Forbidden("memory_context spans every project; a scoped token cannot use it")
        return super().context(project=project, cwd=cwd)

    def identity(self, name: str) -> dict[str, Any]:
        # A scoped token reads the identity files HTTP gives it; MEMORY.md is rendered from
        # every project's memories.
        if _scope.get() is not None and name == "MEMORY.md":
            raise Forbidden("MEMORY.md spans every project; a scoped token cannot read it")
        return self._shared.identity_file(name)
