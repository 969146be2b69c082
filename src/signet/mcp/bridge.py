"""`signet mcp` when the daemon runs: a stdio <-> streamable HTTP relay to the daemon's `/mcp`.

A harness waits only seconds for `initialize`, and serving MCP here would import the SDK, the web
stack and the app. So each JSON-RPC line on stdin is POSTed to `/mcp` with the workspace's token,
concurrently so a slow tool does not hold up a `ping`; after a daemon restart it initialises again
and retries once. Standard library only.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = ["Bridge", "daemon_answers"]

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
REQUEST_TIMEOUT_S = 600.0  # a tool call may wait on the model; the harness has its own limit
INTERNAL_ERROR = -32603
METHOD_NOT_FOUND = -32601


def daemon_answers(host: str, port: int, pid_path: str, timeout_s: float) -> bool:
    """Whether the workspace's daemon answers at host:port: `/health` names the pid that the
    workspace's pid file holds (another workspace's daemon on that port is not ours)."""
    try:
        with open(pid_path, encoding="ascii") as handle:
            expected = int(handle.read().strip())
    except (OSError, ValueError):
        return False
    try:
        conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
        try:
            conn.request("GET", "/health")
            reply = conn.getresponse()
            body = json.loads(reply.read()) if reply.status == 200 else None
        finally:
            conn.close()
    except (OSError, http.client.HTTPException, ValueError):
        return False
    return isinstance(body, dict) and body.get("pid") == expected


class Bridge:
    def __init__(self, host: str, port: int, token: str | None, out: BinaryIO) -> None:
        self.host, self.port, self.token, self.out = host, port, token, out
        self.session: str | None = None
        self.version: str | None = None
        self.initialize: dict[str, Any] | None = None  # the client's, replayed after a restart
        self._write_lock = threading.Lock()
        self._session_lock = threading.Lock()

    # --- the loop ---------------------------------------------------------------------------

    def run(self, stdin: BinaryIO) -> None:
        threads: list[threading.Thread] = []
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self._write({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32700, "message": "parse error"}})
                continue
            if isinstance(message, dict) and message.get("method") == "initialize":
                self.initialize = message
                self._relay(message)  # before reading on: what follows needs its session
                continue
            if self.initialize is None:
                self._before_initialize(message)
                continue
            thread = threading.Thread(target=self._relay, args=(message,), daemon=True)
            thread.start()
            threads.append(thread)
            threads = [t for t in threads if t.is_alive()]
        for thread in threads:
            thread.join(REQUEST_TIMEOUT_S)
        self._close_session()

    def _before_initialize(self, message: Any) -> None:
        """A request before `initialize` (a newer client's `server/discover`) is answered here
        as a server without that method answers it: the client then initialises. Relayed, it
        would reach the daemon without a session."""
        if isinstance(message, dict) and "method" in message and message.get("id") is not None:
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": METHOD_NOT_FOUND, "message": f"{message['method']}: call initialize first"}})

    # --- relaying ---------------------------------------------------------------------------

    def _relay(self, message: Any) -> None:
        try:
            status = self._post(message)
            if status == 404 and self.session is not None and self.initialize is not None:
                self._reinitialize()
                status = self._post(message)
            if status >= 400:
                self._fail(message, f"the Signet daemon answered HTTP {status}")
        except (OSError, http.client.HTTPException) as exc:
            self._fail(message, f"the Signet daemon at {self.host}:{self.port} did not answer ({exc})")

    def _post(self, message: Any, *, forward: bool = True) -> int:
        """POST one message; write every message of the answer to stdout. The HTTP status."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            conn.request("POST", MCP_PATH, body=json.dumps(message).encode("utf-8"),
                         headers=self._headers())
            reply = conn.getresponse()
            if isinstance(message, dict) and message.get("method") == "initialize":
                self.session = reply.getheader(SESSION_HEADER) or self.session
            kind = (reply.getheader("content-type") or "").split(";")[0].strip()
            if reply.status >= 400 and reply.status != 404:
                body = reply.read()
                self._error_body(message, reply.status, body)
                return 200  # answered, as an error the client reads
            if reply.status == 404:
                reply.read()
                return 404
            if kind == "text/event-stream":
                self._relay_stream(reply, message, forward)
            else:
                body = reply.read()
                if body.strip():
                    self._deliver(json.loads(body), message, forward)
            return reply.status
        finally:
            conn.close()

    def _relay_stream(self, reply: http.client.HTTPResponse, message: Any, forward: bool) -> None:
        data: list[str] = []
        while True:
            raw = reply.readline()
            if not raw:
                break
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
            elif not line and data:
                self._deliver(json.loads("\n".join(data)), message, forward)
                data = []
        if data:
            self._deliver(json.loads("\n".join(data)), message, forward)

    def _deliver(self, answer: Any, message: Any, forward: bool) -> None:
        if isinstance(message, dict) and message.get("method") == "initialize" and isinstance(answer, dict):
            result = answer.get("result")
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.version = result["protocolVersion"]
        if forward:
            self._write(answer)

    def _reinitialize(self) -> None:
        """The daemon restarted and forgot the session: open a new one, quietly."""
        with self._session_lock:
            self.session = None
            assert self.initialize is not None
            self._post(self.initialize, forward=False)
            self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, forward=False)

    def _close_session(self) -> None:
        if self.session is None:
            return
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=2)
            try:
                conn.request("DELETE", MCP_PATH, headers=self._headers())
                conn.getresponse().read()
            finally:
                conn.close()
        except (OSError, http.client.HTTPException):
            pass

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream", "X-Signet-Actor": "mcp"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session:
            headers[SESSION_HEADER] = self.session
        if self.version:
            headers[VERSION_HEADER] = self.version
        return headers

    # --- output -----------------------------------------------------------------------------

    def _error_body(self, message: Any, status: int, body: bytes) -> None:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and answer.get("jsonrpc") == "2.0":
            if answer.get("id") is None and isinstance(message, dict) and message.get("id") is not None:
                answer["id"] = message["id"]  # the transport's refusal, answered to its request
            self._write(answer)  # the SDK's own JSON-RPC error
            return
        detail = answer.get("error") if isinstance(answer, dict) else None
        self._fail(message, f"the Signet daemon answered HTTP {status}" + (f": {detail}" if detail else ""))

    def _fail(self, message: Any, text: str) -> None:
        """A request gets an error answer; a notification or a response gets nothing."""
        if isinstance(message, dict) and "method" in message and message.get("id") is not None:
            self._write({"jsonrpc": "2.0", "id": message["id"],
                         "error": {"code": INTERNAL_ERROR, "message": text}})
        else:
            sys.stderr.write(f"signet mcp: {text}\n")

    def _write(self, answer: Any) -> None:
        line = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self.out.write(line)
                self.out.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client went away; its stdin's end stops the loop
