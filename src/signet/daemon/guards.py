"""The ASGI guards in front of every route (docs/security.md says what each one stops).

Outermost first: `HostGuard` (the Host header must name this daemon: no DNS rebinding, 421), `Cors`
(allowed origins only, never a wildcard, 403), `Authenticate` (a bearer token or the dashboard's
session cookie on every path but `/health`, the login paths and the page shell, 401; a cookie-
authenticated mutation needs its CSRF token, 403). Plain ASGI classes, so streaming responses (/mcp)
pass untouched.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import math
import time
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet.daemon.tokens import TokenAuthority
from signet.errors import RateLimited, SignetError, StoreError, Unauthorized
from signet.store.connection import DatabaseError

if TYPE_CHECKING:  # auth imports FastAPI; the starting daemon's /health guard must not wait
    from signet.daemon.auth import RateLimiter

__all__ = [
    "CSRF_HEADER", "PUBLIC_PATHS", "SESSION_COOKIE", "Authenticate", "Cors", "HostGuard",
    "csrf_token", "is_public",
]

log = logging.getLogger(__name__)

PUBLIC_PATHS = frozenset({"/health", "/auth/login"})
# Public paths that take a credential (a one-time login code): each request spends the
# unauthenticated rate limit, so codes cannot be guessed at full speed.
LOGIN_PATHS = frozenset({"/auth/login", "/app/login"})
# The dashboard's shell: HTML, scripts and styles that hold no data, and its login link (the
# one-time code is the credential). Everything it shows comes from /api/... with the cookie.
DASHBOARD_PREFIX = "/app/"
SESSION_COOKIE = "signet_session"
CSRF_HEADER = "X-Signet-CSRF"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
ALLOW_HEADERS = (
    "Authorization, Content-Type, X-Signet-CSRF, X-Signet-Actor, X-Signet-Session, X-Request-Id,"
    " Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
)
EXPOSE_HEADERS = "X-Request-Id, Mcp-Session-Id"
GUARDED = frozenset({"http", "websocket"})  # lifespan messages pass; every connection is checked
TOUCH_EVERY_S = 60.0  # last_used_at is a write; once a minute per token is plenty


class HostGuard:
    def __init__(self, app: ASGIApp, *, port: int, allowed_hosts: tuple[str, ...] = ()) -> None:
        self.app = app
        self.port = port
        self.extra = tuple(h.strip().lower() for h in allowed_hosts if h.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in GUARDED:
            await self.app(scope, receive, send)
            return
        host = (_header(scope, b"host") or "").lower()
        if not self.allows(host, _served_port(scope) or self.port):
            shown = host[:100] or "(none)"
            await _refuse(scope, send, 421, {
                "error": f"Host header {shown!r} is not allowed: this daemon answers only to its"
                         " loopback names (DNS rebinding protection); add other names to"
                         " network.allowed_hosts",
                "code": "host_not_allowed",
            })
            return
        await self.app(scope, receive, send)

    def allows(self, host: str, port: int) -> bool:
        if host in {f"{name}:{port}" for name in LOOPBACK_HOSTS}:
            return True
        name = _host_name(host)
        return any(host == entry or (name == entry and ":" not in entry.strip("[]"))
                   for entry in self.extra)


class Cors:
    def __init__(self, app: ASGIApp, *, port: int, origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.port = port
        self.extra = frozenset(o.strip().rstrip("/").lower() for o in origins if o.strip())

    def allows(self, origin: str, port: int) -> bool:
        own = {f"http://{name}:{port}" for name in LOOPBACK_HOSTS}
        return origin in own or origin in self.extra

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin") if scope["type"] in GUARDED else None
        if origin is None:
            await self.app(scope, receive, send)
            return
        origin = origin.rstrip("/").lower()
        if not self.allows(origin, _served_port(scope) or self.port):
            await _refuse(scope, send, 403, {
                "error": f"origin {origin[:100]!r} is not allowed (CORS); add it to"
                         " network.cors_origins to let that page call the daemon",
                "code": "origin_not_allowed",
            })
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cors = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            await send({"type": "http.response.start", "status": 204, "headers": [
                *cors,
                (b"access-control-allow-methods", ALLOW_METHODS.encode()),
                (b"access-control-allow-headers", ALLOW_HEADERS.encode()),
                (b"access-control-max-age", b"600"),
                (b"content-length", b"0"),
            ]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *cors,
                           (b"access-control-expose-headers", EXPOSE_HEADERS.encode())]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_cors)


class Authenticate:
    """`refusals`: a rate limit of its own for requests without a valid token, per client
    address (429 with Retry-After past it), so guessing tokens or flooding the daemon
    unauthenticated is slowed down without touching any token's budget."""

    def __init__(
        self, app: ASGIApp, *, authority: TokenAuthority, refusals: RateLimiter | None = None
    ) -> None:
        self.app = app
        self.authority = authority
        self.refusals = refusals
        self._touched: dict[str, float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in GUARDED or is_public(scope["path"]):
            if scope.get("path") in LOGIN_PATHS and (limited := self._limited(scope)) is not None:
                await _too_many(scope, send, limited)
                return
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        session = _session_cookie(scope) if token is None else None
        token = token or session
        try:
            if token is None:
                raise Unauthorized(
                    "a bearer token is required (Authorization: Bearer <token>; local clients"
                    " read it from <workspace>/.daemon/token)"
                )
            principal = self.authority.verify(token)
        except Unauthorized as exc:
            if (limited := self._limited(scope)) is not None:
                await _too_many(scope, send, limited)
                return
            await _refuse(scope, send, 401, {"error": exc.message, "code": exc.code},
                          [(b"www-authenticate", b'Bearer realm="signet"')])
            return
        except (DatabaseError, StoreError) as exc:  # the store failed, not the caller: as errors.py
            log.error("database error while checking a token: %s", exc)
            await _refuse(scope, send, 503, {"error": f"database error: {exc}", "code": "store_error"})
            return
        if session is not None:
            csrf = csrf_token(session)
            if scope["type"] == "http" and scope["method"] in MUTATING and not hmac.compare_digest(
                (_header(scope, CSRF_HEADER.lower().encode()) or "").encode(), csrf.encode()
            ):
                await _refuse(scope, send, 403, {
                    "error": f"this request is authenticated by the dashboard's session cookie"
                             f" and must carry its CSRF token in {CSRF_HEADER}",
                    "code": "csrf_failed",
                })
                return
            scope.setdefault("state", {})["csrf"] = csrf
        scope.setdefault("state", {})["principal"] = principal
        await self._touch(principal.token_id)
        await self.app(scope, receive, send)

    def _limited(self, scope: Scope) -> RateLimited | None:
        if self.refusals is None:
            return None
        client = scope.get("client")
        try:
            self.refusals.check(f"unauthenticated:{client[0] if client else '?'}")
        except RateLimited as exc:
            return RateLimited(
                "too many requests without a valid token from this address", retry_after=exc.retry_after
            )
        return None

    async def _touch(self, token_id: str) -> None:
        now = time.monotonic()
        if now - self._touched.get(token_id, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
            return
        self._touched[token_id] = now
        try:
            await anyio.to_thread.run_sync(self.authority.touch, token_id)
        except (DatabaseError, SignetError) as exc:  # bookkeeping only: never fail the request
            log.warning("could not record token use: %s", exc)


def is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path == "/" or path.startswith(DASHBOARD_PREFIX)


def csrf_token(session_token: str) -> str:
    """The CSRF token of a cookie session: derived from the session's token (a secret the page
    never sees: the cookie is HttpOnly), so it needs no storage and dies with the session."""
    digest = hmac.new(session_token.encode(), b"signet-dashboard-csrf", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _session_cookie(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    try:
        morsel = SimpleCookie(raw).get(SESSION_COOKIE)
    except CookieError:
        return None
    return morsel.value.strip() or None if morsel is not None else None


def _bearer(scope: Scope) -> str | None:
    value = _header(scope, b"authorization")
    if not value:
        return None
    kind, _, token = value.partition(" ")
    if kind.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _served_port(scope: Scope) -> int | None:
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else None


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _too_many(scope: Scope, send: Send, limited: RateLimited) -> None:
    await _refuse(scope, send, 429, {"error": limited.message, "code": limited.code},
                  [(b"retry-after", str(max(1, math.ceil(limited.retry_after))).encode())])


async def _refuse(
    scope: Scope, send: Send, status: int, payload: dict[str, str],
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """The error answer; a WebSocket handshake is closed (policy violation) instead."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": payload["code"]})
        return
    await _send_json(send, status, payload, extra)


async def _send_json(
    send: Send, status: int, payload: dict[str, str], extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps(payload).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()), *(extra or [])],
    })
    await send({"type": "http.response.body", "body": body})
