"""Permissions and scope for the MCP tools served at /mcp.

The HTTP request carrying an MCP message has already passed `guards.Authenticate`, so its
`Principal` is in the request state. `guard_mcp` adds an MCP server middleware that, for every
`tools/call`, checks the tool's permission (`TOOL_PERMISSIONS`; a tool missing from the table
needs `admin`, so a new tool is closed until someone decides), applies the per-token rate limit
to the tools that write, and makes the principal's scope current for the call.

`ScopedAppBackend` is the /mcp backend: the same in-process calls as `mcp.AppBackend`, but for
a scoped principal every call goes through `ScopedApp`, which passes the scope to the app (so
agent A's MCP session never reads agent B's memories) and offers nothing else.
"""

from __future__ import annotations

import functools
from contextvars import ContextVar
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from signet.app import SignetApp
from signet.daemon.auth import RateLimiter
from signet.daemon.tokens import Principal
from signet.errors import Forbidden, SignetError
from signet.mcp.backends import AppBackend
from signet.types import MemoryScope

__all__ = ["TOOL_PERMISSIONS", "ScopedApp", "ScopedAppBackend", "guard_mcp"]

TOOL_PERMISSIONS: dict[str, str] = {
    "memory_search": "recall",
    "memory_get": "recall",
    "memory_list": "recall",
    "memory_store": "remember",
    "memory_modify": "modify",
    "memory_forget": "forget",
    "memory_feedback": "remember",
    "session_search": "recall",
    "memory_context": "recall",
}
READ_TOOL_PERMISSIONS = frozenset({"recall", "diagnostics", "analytics"})

_scope: ContextVar[MemoryScope | None] = ContextVar("signet_mcp_scope", default=None)


def guard_mcp(server: MCPServer, limiter: RateLimiter | None) -> None:
    """Check every tool call's permission against the calling token (see module doc)."""

    async def check(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        principal = _principal_of(ctx)
        name = str((ctx.params or {}).get("name", ""))
        permission = TOOL_PERMISSIONS.get(name, "admin")
        if not principal.allows(permission):
            return _refusal(f"forbidden: this token lacks the {permission} permission ({name})")
        if limiter is not None and permission not in READ_TOOL_PERMISSIONS:
            try:
                limiter.check(principal.token_id)
            except SignetError as exc:
                return _refusal(exc.message)
        scope = (
            MemoryScope(agent_id=principal.scope_agent, project=principal.scope_project)
            if principal.scoped else None
        )
        token = _scope.set(scope)
        try:
            return await call_next(ctx)
        finally:
            _scope.reset(token)

    server.middleware.append(check)


def _refusal(message: str) -> CallToolResult:
    """A tool error the agent can read (as the tools' own SignetErrors become)."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _principal_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    request = ctx.request
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    principal = state.get("principal")
    if not isinstance(principal, Principal):
        # Only reachable if /mcp were served without guards.Authenticate: refuse, never allow.
        raise ToolError("unauthorized: a bearer token is required")
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
    """`AppBackend` whose calls honour the scope of the token that made the MCP request."""

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
