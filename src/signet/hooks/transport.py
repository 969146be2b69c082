"""One POST to the daemon with the standard library (urllib): no httpx import on the hook path.

The address is the workspace's daemon (SIGNET_PORT / SIGNET_BIND / agent.yaml, as every
client resolves it), the token the one the daemon wrote to `<workspace>/.daemon/token`.
Any failure is a `HookTransportError` whose message says what went wrong, for the log line.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["HookTransportError", "post", "url_of"]


class HookTransportError(Exception):
    """The daemon could not be asked, or did not answer with JSON."""


def url_of(bind: str, port: int) -> str:
    # A daemon bound to every interface is still reached over loopback.
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(bind, bind)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def post(base_url: str, path: str, body: dict[str, Any], token_path: Path, timeout_s: float) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "X-Signet-Actor": "hook"}
    token = _token(token_path)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode("utf-8")
    request = urllib.request.Request(base_url + path, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:  # noqa: S310 - our daemon
            raw = reply.read()
    except urllib.error.HTTPError as exc:
        raise HookTransportError(f"daemon answered HTTP {exc.code}: {_error_text(exc)}") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise HookTransportError(f"daemon at {base_url} did not answer: {reason}") from exc
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise HookTransportError("daemon answered with something that is not JSON") from exc
    if not isinstance(answer, dict):
        raise HookTransportError("daemon answered with JSON that is not an object")
    return answer


def _token(path: Path) -> str | None:
    try:
        return path.read_text("utf-8").strip() or None
    except OSError:
        return None


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read() or b"{}")
        return str(body.get("error") or body)[:300]
    except (ValueError, OSError, AttributeError):
        return str(exc.reason)[:300]
