"""A fake Anthropic Messages API on loopback that a real Claude Code can talk to.

`FakeAnthropic` answers `POST /v1/messages` as the API does, as a server-sent event stream when
the request asks for `"stream": true` (message_start, content blocks with their deltas,
message_delta with the stop reason, message_stop) and as one JSON message otherwise, and
`POST /v1/messages/count_tokens`. Every request is recorded (`requests`: path and parsed
JSON). What a request gets is `script(request) -> list of blocks`: `{"type": "text", "text"}`
and `{"type": "tool_use", "name", "input"}` (its id is made here); a turn with a tool_use
stops with `tool_use`, else `end_turn`. `[{"type": "http_error", "status": 400, "error_type":
"invalid_request_error", "message": "..."}]` answers with that status and the API's error
body instead. The default answers "ok".
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]


class _QuietServer(ThreadingHTTPServer):
    """A client gone mid-answer (a `claude` killed at its timeout) is no error of the test."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class Recorded:
    path: str
    json: dict[str, Any]


class FakeAnthropic:
    def __init__(self, script: Callable[[dict[str, Any]], list[Block]] | None = None) -> None:
        self.script = script or (lambda _request: [{"type": "text", "text": "ok"}])
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = 0
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def messages(self) -> list[dict[str, Any]]:
        """The recorded /v1/messages requests' bodies, in order."""
        return [r.json for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:  # the stdlib's name
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                with fake._lock:
                    fake.requests.append(Recorded(self.path, body))
                path = self.path.split("?")[0]
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": 100})
                elif path == "/v1/messages":
                    blocks = fake.script(body)
                    failed = [b for b in blocks if b["type"] == "http_error"]
                    if failed:
                        self._json(failed[0]["status"], {"type": "error", "error": {
                            "type": failed[0].get("error_type", "api_error"),
                            "message": failed[0].get("message", "scripted failure")}})
                    elif body.get("stream"):
                        self._stream(body, blocks)
                    else:
                        self._json(200, fake._message(body, blocks))
                else:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                                  "message": self.path}})

            def do_GET(self) -> None:
                self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                              "message": self.path}})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def _json(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, request: dict[str, Any], blocks: list[Block]) -> None:
                message = fake._message(request, blocks)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                start = {**message, "content": [], "stop_reason": None,
                         "usage": {**message["usage"], "output_tokens": 1}}
                self._event("message_start", {"type": "message_start", "message": start})
                for index, block in enumerate(message["content"]):
                    if block["type"] == "tool_use":
                        self._event("content_block_start", {
                            "type": "content_block_start", "index": index,
                            "content_block": {**block, "input": {}}})
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                    else:
                        self._event("content_block_start", {
                            "type": "content_block_start", "index": index,
                            "content_block": {"type": "text", "text": ""}})
                        delta = {"type": "text_delta", "text": block["text"]}
                    self._event("content_block_delta",
                                {"type": "content_block_delta", "index": index, "delta": delta})
                    self._event("content_block_stop", {"type": "content_block_stop", "index": index})
                self._event("message_delta", {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]}})
                self._event("message_stop", {"type": "message_stop"})
                self.close_connection = True

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        return Handler

    def _message(self, request: dict[str, Any], blocks: list[Block]) -> dict[str, Any]:
        content = []
        for block in blocks:
            if block["type"] == "tool_use":
                content.append({"type": "tool_use", "id": self._next_id("toolu"),
                                "name": block["name"], "input": block.get("input", {})})
            else:
                content.append({"type": "text", "text": block["text"]})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return {"id": self._next_id("msg"), "type": "message", "role": "assistant",
                "model": request.get("model", "claude-sonnet-4-5"), "content": content,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 5,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
