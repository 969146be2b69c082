"""Two plain ASGI middlewares around every request.

`AccessLog` (outermost) gives each request an id (`X-Request-Id`, echoed), logs one line without
query or body, and turns an unexpected exception into a logged 500. `BodyLimit` reads the body
before the route: past the limit it is drained and answered 413 (not a reset connection), and one
slower than BODY_TIMEOUT_S gets 408. It sits inside the Host and token guards, so nothing is
buffered for an unauthenticated caller.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("signet.daemon.access")

MAX_BODY_BYTES = 1024 * 1024
BODY_TIMEOUT_S = 30.0
QUIET_PATHS = frozenset({"/health"})  # polled by every client; logged at debug level only


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _header(scope, b"x-request-id") or uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:  # the one place unexpected errors are caught
            log.exception("unhandled error", extra=_fields(scope, 500, started, request_id))
            if status == 0:
                status = 500
                await _send_json(send_with_id, 500, {"error": "internal error", "code": "internal"})
            return
        level = logging.DEBUG if scope["path"] in QUIET_PATHS else logging.INFO
        log.log(level, "request", extra=_fields(scope, status, started, request_id))


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            with anyio.fail_after(BODY_TIMEOUT_S):
                body, too_large = await self._read(receive)
        except TimeoutError:
            message = f"request body not received within {BODY_TIMEOUT_S:g}s"
            await _send_json(send, 408, {"error": message, "code": "request_timeout"})
            return
        if body is None:  # the client went away before sending its body
            return
        if too_large:
            message = f"request body over {self.max_bytes} bytes"
            await _send_json(send, 413, {"error": message, "code": "payload_too_large"})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive) -> tuple[bytes | None, bool]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None, False
            size += len(message.get("body", b""))
            if size <= self.max_bytes:
                chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks), size > self.max_bytes


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")[:200] or None
    return None


def _fields(scope: Scope, status: int, started: float, request_id: str) -> dict[str, Any]:
    return {
        "method": scope["method"], "path": scope["path"], "status": status,
        "ms": round((time.perf_counter() - started) * 1000, 2), "request_id": request_id,
    }


async def _send_json(send: Send, status: int, payload: dict[str, str]) -> None:
    body = json.dumps(payload).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
