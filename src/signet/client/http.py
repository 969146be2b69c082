"""HTTP to the daemon over the standard library, for `signet.Client`. Importing httpx cost a short
`signet` command about 0.1 s of CPU, more than its request; the daemon speaks plain HTTP/1.1, so
`http.client` with one keep-alive connection is enough. An `https://` SIGNET_DAEMON_URL gets the
system's default TLS verification.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from signet.errors import SignetError

__all__ = ["DaemonHttp", "Reply", "TransportError", "error_from_reply"]


class TransportError(Exception):
    """Nothing answered, or the connection broke before a reply came."""


class Reply:
    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class DaemonHttp:
    """One keep-alive connection to `base_url`, sending `headers` on every request."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout_s: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url
        self._tls = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")
        self.headers = headers
        self._timeout = timeout_s
        self._conn: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, *, json_body: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Reply:
        target = self._prefix + path + (f"?{urlencode(params)}" if params else "")
        body = None if json_body is None else json.dumps(json_body).encode("utf-8")
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        # A kept-alive connection the server has closed fails on first use: retry once, fresh.
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, target, body=body, headers=headers)
                reply = conn.getresponse()
                return Reply(reply.status, reply.read())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if attempt == 2:
                    raise TransportError(str(exc) or type(exc).__name__) from exc
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                raise TransportError(str(exc) or type(exc).__name__) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._tls:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout
                )
            else:
                self._conn = http.client.HTTPConnection(
                    self._host, self._port, timeout=self._timeout
                )
        return self._conn


def error_from_reply(reply: Reply) -> SignetError:
    """`{"error", "code"}` back to the SignetError subclass that owns that code."""
    try:
        body = reply.json()
        message, code = str(body["error"]), str(body["code"])
    except (ValueError, KeyError, TypeError):
        text = reply.text.strip()[:200]
        return SignetError(f"daemon answered HTTP {reply.status}: {text}", code="daemon_error")
    return _error_classes().get(code, SignetError)(message, code=code)


def _error_classes() -> dict[str, type[SignetError]]:
    found: dict[str, type[SignetError]] = {}
    pending: list[type[SignetError]] = [SignetError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found
