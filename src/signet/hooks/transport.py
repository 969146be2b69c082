"""One POST to the daemon over a plain socket: `urllib` and `http.client` import the email package,
which costs a hook more than the request. The daemon speaks plain HTTP/1.1, so the hook writes
the request and reads the reply itself. Any failure is a `HookTransportError` saying what went
wrong, for the log line.
"""

from __future__ import annotations

import json
import socket
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["DaemonDown", "HookTransportError", "post"]

MAX_REPLY_BYTES = 16 * 1024 * 1024


class HookTransportError(Exception):
    """The daemon could not be asked, or did not answer with a JSON object."""


class DaemonDown(HookTransportError):
    """Nothing listens on the daemon's port (the connection was refused)."""


def host_of(bind: str) -> str:
    # A daemon bound to every interface is still reached over loopback.
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(bind, bind)


def post(
    bind: str, port: int, path: str, body: dict[str, Any], token_path: str, timeout_s: float
) -> dict[str, Any]:
    host = host_of(bind)
    data = json.dumps(body).encode("utf-8")
    headers = [
        f"POST {path} HTTP/1.1", f"Host: {_host_header(host, port)}",
        "Content-Type: application/json", f"Content-Length: {len(data)}",
        "X-Signet-Actor: hook", "Connection: close",
    ]
    token = _token(token_path)
    if token:
        headers.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + data
    deadline = time.monotonic() + timeout_s
    try:
        # An ASCII address goes as bytes: a str would load the idna codec to resolve it.
        address = host.encode("ascii") if host.isascii() else host
        # (typeshed says str; CPython takes bytes, and that skips the codec.)
        with socket.create_connection(
            (address, port), timeout=timeout_s  # type: ignore[arg-type]
        ) as sock:
            sock.sendall(request)
            raw = _read_all(sock, deadline)
    except ConnectionRefusedError as exc:
        raise DaemonDown(f"daemon at {host}:{port} did not answer: {exc}") from exc
    except OSError as exc:
        raise HookTransportError(f"daemon at {host}:{port} did not answer: {exc}") from exc
    status, reply = _parse(raw)
    try:
        answer = json.loads(reply)
    except ValueError as exc:
        raise HookTransportError(f"daemon answered HTTP {status} with something that is not JSON") from exc
    if status >= 400:
        error = answer.get("error") if isinstance(answer, dict) else answer
        raise HookTransportError(f"daemon answered HTTP {status}: {str(error)[:300]}")
    if not isinstance(answer, dict):
        raise HookTransportError("daemon answered with JSON that is not an object")
    return answer


def _read_all(sock: socket.socket, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out reading the reply")
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise HookTransportError("the daemon's reply is too large")


def _parse(raw: bytes) -> tuple[int, bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2) if lines and sep else []
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HookTransportError("the daemon's reply is not HTTP")
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    elif "content-length" in fields and fields["content-length"].isdigit():
        body = body[: int(fields["content-length"])]
    return int(parts[1]), body


def _unchunk(body: bytes) -> bytes:
    out, rest = [], body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
        except ValueError as exc:
            raise HookTransportError("the daemon's chunked reply is malformed") from exc
        if size == 0:
            break
        out.append(rest[:size])
        rest = rest[size + 2 :]
    return b"".join(out)


def _host_header(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _token(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip() or None
    except OSError:
        return None
