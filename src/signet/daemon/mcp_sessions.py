"""The MCP sessions each token holds at /mcp: a cap on how many, and each bound to its token.

A request naming a session its token does not hold gets the SDK's own unknown-session 404, so
another token can neither use, close nor detect it. A token may hold at most `per_token` open
sessions (429 with Retry-After past it).
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet.daemon.tokens import Principal

__all__ = ["McpSessionCap"]


@dataclasses.dataclass
class _Session:
    in_flight: int = 0
    last_done: float = dataclasses.field(default_factory=time.monotonic)


class McpSessionCap:
    """ASGI middleware holding each token's MCP sessions.

    It keeps its own account from the wire, as the mcp SDK has no public way to list sessions. A
    session opens with the `Mcp-Session-Id` of an opening answer and ends on a successful DELETE, an
    SDK 404, or idle for `auth.mcp_session_idle_s` plus a grace second, so a slot is freed only once
    the SDK has reaped the session too."""

    GRACE_S = 1.0

    def __init__(
        self, app: ASGIApp, *, api: Any, per_token: int, idle_s: float, path: str = "/mcp"
    ) -> None:
        self.app = app
        self.api = api
        self.per_token = per_token
        self.idle_s = idle_s
        self.path = path
        self._sessions: dict[str, dict[str, _Session]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal") if scope["type"] == "http" else None
        if scope.get("path") != self.path or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        held = self._live(principal.token_id)
        session_id = _header(scope, b"mcp-session-id")
        session = held.get(session_id) if session_id is not None else None
        if session_id is not None and session is None:
            await _unknown_session(send)  # not this token's: as if it did not exist
            return
        opening = scope["method"] == "POST" and session_id is None
        if opening and len(held) >= self.per_token:
            await _too_many(send, self.per_token)
            return
        if session is not None:
            session.in_flight += 1
        status = 0

        async def recording(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                opened = _header({"headers": message.get("headers", [])}, b"mcp-session-id")
                # Only a session the SDK answered for: it also names one in its 400 to a
                # request that is not `initialize` (a newer client's `server/discover`), a
                # session nobody holds, which would take the slot until the idle timeout.
                if opening and opened and 200 <= status < 300:
                    held[opened] = _Session()
            await send(message)

        try:
            await self.app(scope, receive, recording)
        finally:
            if session is not None and session_id is not None:
                session.in_flight -= 1
                session.last_done = time.monotonic()
                ended = status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300)
                if ended:
                    held.pop(session_id, None)

    def _live(self, token_id: str) -> dict[str, _Session]:
        """The token's sessions still open, the idle ones dropped."""
        held = self._sessions.setdefault(token_id, {})
        cutoff = time.monotonic() - self.idle_s - self.GRACE_S
        for session_id in [k for k, v in held.items() if not v.in_flight and v.last_done < cutoff]:
            del held[session_id]
        return held


async def _unknown_session(send: Send) -> None:
    """The SDK's own answer to a session id it does not know (streamable_http_manager)."""
    from mcp.types import INVALID_REQUEST, ErrorData, JSONRPCError  # loaded by then: /mcp ran

    error = JSONRPCError(jsonrpc="2.0", id=None,
                         error=ErrorData(code=INVALID_REQUEST, message="Session not found"))
    await _answer(send, 404, error.model_dump_json(by_alias=True, exclude_unset=True).encode(),
                  [(b"content-type", b"application/json")])


async def _too_many(send: Send, per_token: int) -> None:
    body = json.dumps({
        "error": f"this token already holds {per_token} open MCP sessions"
                 " (auth.mcp_sessions_per_token); close one (DELETE /mcp) or wait",
        "code": "rate_limited",
    }).encode()
    await _answer(send, 429, body,
                  [(b"content-type", b"application/json"), (b"retry-after", b"60")])


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None
