"""A fake LLM server on loopback that speaks the real wire formats, for tests.

`FakeLLMServer` is a real HTTP server on 127.0.0.1 (a free port, served from a background
thread) answering the three chat APIs our providers call:

- Ollama          POST /api/chat             -> {"message": {"content"}, "prompt_eval_count", "eval_count"}
- OpenAI-compat   POST /v1/chat/completions  -> {"choices": [{"message": {"content"}}], "usage"}
- Anthropic       POST /v1/messages          -> {"content": [{"type": "text", "text"}], "usage"}

So a provider under test is pointed at `server.url` exactly as it would be at a real server.
(Embeddings endpoints are not served here.) Streaming is not supported: every reply is one JSON
body, as our providers request with `"stream": false`.

What each request gets back, in order of precedence:

1. the next `Reply` queued with `push(...)`;
2. else `responder(request_json)` if one is set — answer by prompt content (see `prompt_of`);
   it may return a `Reply` or a plain string; if it raises, the request gets an HTTP 500;
3. else `default` (a `Reply`, "ok" unless given).

A `Reply` can fail on purpose: `status=500` sends that status with the API's error body,
`delay_s=2` sleeps before answering (for timeouts), `raw_body=b"not json"` sends those exact
bytes instead of a well-formed body (for malformed or wrongly shaped replies), and `think=True`
wraps the text in `<think>...</think>` the way reasoning models do. Token counts are
deterministic: whitespace-separated words of all request messages (prompt) and of the reply
text (completion), unless the `Reply` sets them.

Every request is recorded (`server.requests`: path, lower-cased headers, parsed JSON) for
assertions. Usage:

    with FakeLLMServer() as server:
        server.push(Reply('{"facts": []}'), Reply("", status=500))
        llm = make_llm("ollama", model="m", base_url=server.url)
        llm.complete("hi")
        assert server.requests[0].json["model"] == "m"
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

__all__ = ["FakeLLMServer", "RecordedRequest", "Reply", "prompt_of", "system_of"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. See the module docstring for what each field does."""

    text: str = "ok"
    status: int = 200
    delay_s: float = 0.0
    raw_body: bytes | str | None = None
    think: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    json: Any  # the parsed body, or None when it was not JSON
    body: bytes = field(repr=False, default=b"")


Responder = Callable[[Any], "Reply | str"]

CHAT_PATHS = ("/api/chat", "/v1/chat/completions", "/v1/messages")


class FakeLLMServer:
    """A loopback LLM server with scripted replies; use as a context manager."""

    def __init__(self, default: Reply | None = None, responder: Responder | None = None) -> None:
        self.default = default or Reply()
        self.responder = responder
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = count(1)
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        # A short poll interval: `shutdown()` waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-llm-server",
            daemon=True,
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def push(self, *replies: Reply | str) -> None:
        """Queue replies, answered first-in first-out before responder and default."""
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # cuts short any delayed reply still sleeping
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- called from handler threads ----------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self, request_json: Any) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return _as_reply(self.responder(request_json))
        return self.default

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping must not hold up shutdown
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The client gave up (a timeout test) and closed the socket: expected, not noise.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parsed = _parse_json(body)
        fake._record(
            RecordedRequest(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                json=parsed,
                body=body,
            )
        )
        if self.path not in CHAT_PATHS:
            return self._send(404, {"error": f"fake llm server: no route {self.path}"})
        if not isinstance(parsed, dict):
            return self._send(400, {"error": "fake llm server: request body is not a JSON object"})
        try:
            reply = fake._next_reply(parsed)
        except Exception as exc:  # a broken responder is the test's bug; show it as a 500
            return self._send(500, {"error": f"fake llm responder failed: {exc!r}"})
        if reply.delay_s:
            fake._sleep(reply.delay_s)
        if reply.raw_body is not None:
            raw = reply.raw_body.encode() if isinstance(reply.raw_body, str) else reply.raw_body
            return self._send_bytes(reply.status, raw)
        if reply.status >= 400:
            return self._send(reply.status, _error_body(self.path, reply.text))
        return self._send(200, _chat_body(self.path, parsed, reply, next(fake._ids)))

    def _send(self, status: int, payload: Any) -> None:
        self._send_bytes(status, json.dumps(payload).encode())

    def _send_bytes(self, status: int, raw: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


# -- wire formats ------------------------------------------------------------------------------


def _chat_body(path: str, request: dict[str, Any], reply: Reply, n: int) -> dict[str, Any]:
    text = f"<think>thinking it over</think>\n{reply.text}" if reply.think else reply.text
    p = reply.prompt_tokens if reply.prompt_tokens is not None else _prompt_words(request)
    c = reply.completion_tokens if reply.completion_tokens is not None else len(text.split())
    model = request.get("model", "fake")
    if path == "/api/chat":
        return {
            "model": model,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": p,
            "eval_count": c,
        }
    if path == "/v1/chat/completions":
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
        }
    return {
        "id": f"msg_fake_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": p, "output_tokens": c},
    }


def _error_body(path: str, message: str) -> dict[str, Any]:
    if path == "/api/chat":
        return {"error": message}
    if path == "/v1/messages":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error"}}


# -- helpers for responders and assertions -----------------------------------------------------


def prompt_of(request_json: Any) -> str:
    """The text of the last user message, in any of the three formats."""
    users = [m for m in _messages(request_json) if m.get("role") == "user"]
    return _text(users[-1].get("content")) if users else ""


def system_of(request_json: Any) -> str:
    """The system prompt: Anthropic's top-level `system`, else the system messages joined."""
    if isinstance(request_json, dict) and "system" in request_json:
        return _text(request_json["system"])
    systems = [m for m in _messages(request_json) if m.get("role") == "system"]
    return "\n".join(_text(m.get("content")) for m in systems)


def _messages(request_json: Any) -> list[dict[str, Any]]:
    if not isinstance(request_json, dict):
        return []
    messages = request_json.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _text(content: Any) -> str:
    """Message content as text: a string, or Anthropic-style blocks [{"type": "text", ...}]."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _prompt_words(request: dict[str, Any]) -> int:
    # Anthropic carries the system prompt top-level; the others as a message counted below.
    words = len(_text(request.get("system")).split())
    return words + sum(len(_text(m.get("content")).split()) for m in _messages(request))


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _as_reply(reply: Reply | str) -> Reply:
    return reply if isinstance(reply, Reply) else Reply(reply)
