"""ASGI middleware feeding every request's latency into the app's telemetry (signet/telemetry.py).

The operation is `METHOD /route/{template}` (`METHOD (unmatched)` when no route matched, `OTHER` for
a non-HTTP method), so the key set cannot grow with random requests; an error answer adds its JSON
`code`. No query string, body or header value is kept.
"""

from __future__ import annotations

import json
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from signet.telemetry import Telemetry

__all__ = ["RequestTelemetry", "operation_name"]

MAX_ERROR_BODY = 4096
# HTTP's methods (RFC 9110, PATCH): any other token a client invents is named OTHER, or each
# would be a name of its own, and a few hundred would fill the telemetry's table.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                     "PATCH"})


class RequestTelemetry:
    def __init__(self, app: ASGIApp, *, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.telemetry.enabled:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0
        code: str | None = None

        async def observe(message: Message) -> None:
            nonlocal status, code
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status >= 400 and code is None:
                code = _code_of(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, observe)
        except Exception:
            status, code = 500, "internal"
            raise
        finally:
            ms = (time.perf_counter() - started) * 1000
            request_id = (scope.get("state") or {}).get("request_id")
            self.telemetry.record_request(operation_name(scope), status, ms, code, request_id)


def operation_name(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    method = scope["method"] if scope["method"] in METHODS else "OTHER"
    return f"{method} {path if path else '(unmatched)'}"


def _code_of(body: bytes) -> str | None:
    if not body or len(body) > MAX_ERROR_BODY:
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    code = value.get("code") if isinstance(value, dict) else None
    return code[:64] if isinstance(code, str) else None
