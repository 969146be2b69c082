"""A fake embedding server on loopback that speaks Ollama's and OpenAI's real wire formats.

`FakeEmbedServer` is a real HTTP server on 127.0.0.1 (a free port, served from a thread):

- Ollama          POST /api/embed      {"model", "input"} -> {"model", "embeddings": [[...]]}
- OpenAI-compat   POST /v1/embeddings  {"model", "input"} -> {"object": "list", "data":
                  [{"object": "embedding", "embedding": [...], "index": i}], "model", "usage"}

Vectors are deterministic per text (a generator seeded by the text's sha256) and deliberately
not unit length, so a client must normalise them itself. OpenAI's `data` comes back in reverse
order, as the API allows, so a client must place rows by `index`. Errors use each API's own
body: Ollama `{"error": "..."}`, OpenAI `{"error": {"message", "type", "code"}}`; the model
named `missing` is unknown (404, as Ollama says for a model not pulled), and when `api_key` is
set a request without `Authorization: Bearer <key>` gets OpenAI's 401.

Scripted failures, answered first-in first-out before the normal reply: `push(Fault(...))` with
`status=500`, `delay_s=2` (for timeouts), `raw_body=b"{not json"`, or `dimensions=7` (vectors of
the wrong width). `hang()` makes the server accept every request and never answer (a provider
that is up but stuck) until `recover()` or the end of the `with` block. Every request is
recorded in `server.requests` (path, headers, parsed JSON).

    with FakeEmbedServer(dimensions=32) as server:
        server.push(Fault(status=500))
        OllamaEmbedder(model="m", dimensions=32, base_url=server.url).embed(["hi"])  # raises
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = ["Fault", "FakeEmbedServer", "RecordedRequest", "fake_vector"]

MISSING_MODEL = "missing"


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour for the next request."""

    status: int = 200
    delay_s: float = 0.0
    raw_body: bytes | str | None = None
    dimensions: int | None = None


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    json: Any


def fake_vector(text: str, dimensions: int) -> list[float]:
    """The server's vector for `text`: deterministic, length about 3, not normalised."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    values = np.random.default_rng(seed).standard_normal(dimensions)
    return [float(x) for x in 3.0 * values / np.linalg.norm(values)]


class FakeEmbedServer:
    """A loopback embedding server; use as a context manager."""

    def __init__(self, dimensions: int = 32, api_key: str = "") -> None:
        self.dimensions = dimensions
        self.api_key = api_key
        self._faults: deque[Fault] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._hanging = threading.Event()
        self._recovered = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll (0.5 s default)
            name="fake-embed-server",
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

    def hang(self) -> None:
        """From now on, read each request and never answer it."""
        self._recovered.clear()
        self._hanging.set()

    def recover(self) -> None:
        """Answer again; requests left hanging are released (their clients gave up long ago)."""
        self._hanging.clear()
        self._recovered.set()

    def push(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def __enter__(self) -> FakeEmbedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # cuts short a delayed reply still sleeping
        self._recovered.set()  # and releases hanging ones
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _record(self, request: RecordedRequest) -> Fault:
        with self._lock:
            self._requests.append(request)
            return self._faults.popleft() if self._faults else Fault()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeEmbedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out closed its socket: expected in timeout tests


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        fault = fake._record(RecordedRequest(self.path, headers, body))
        if fake._hanging.is_set():
            fake._recovered.wait()  # accepted, read, never answered
            self.close_connection = True
            return
        if fault.delay_s:
            fake._stopping.wait(fault.delay_s)
        if fault.raw_body is not None:
            data = fault.raw_body.encode() if isinstance(fault.raw_body, str) else fault.raw_body
            return self._send_bytes(fault.status, data)
        if self.path == "/api/embed":
            return self._ollama(body, fault)
        if self.path == "/v1/embeddings":
            return self._openai(body, headers, fault)
        return self._send(404, {"error": f"fake embed server: no route {self.path}"})

    def _ollama(self, body: Any, fault: Fault) -> None:
        if fault.status >= 400:
            return self._send(fault.status, {"error": "fake ollama: internal error"})
        if not isinstance(body, dict) or "model" not in body:
            return self._send(400, {"error": "model is required"})
        if body["model"] == MISSING_MODEL:
            message = f'model "{MISSING_MODEL}" not found, try pulling it first'
            return self._send(404, {"error": message})
        vectors = [
            fake_vector(t, fault.dimensions or self.server.fake.dimensions) for t in _inputs(body)
        ]
        return self._send(200, {"model": body["model"], "embeddings": vectors})

    def _openai(self, body: Any, headers: dict[str, str], fault: Fault) -> None:
        key = self.server.fake.api_key
        if key and headers.get("authorization") != f"Bearer {key}":
            return self._send(401, _openai_error("Incorrect API key provided", "invalid_api_key"))
        if fault.status >= 400:
            return self._send(fault.status, _openai_error("The server had an error", None))
        if not isinstance(body, dict) or "model" not in body:
            return self._send(400, _openai_error("you must provide a model parameter", None))
        width = fault.dimensions or self.server.fake.dimensions
        data = [
            {"object": "embedding", "embedding": fake_vector(t, width), "index": i}
            for i, t in enumerate(_inputs(body))
        ]
        tokens = sum(len(t.split()) for t in _inputs(body))
        return self._send(
            200,
            {
                "object": "list",
                "data": data[::-1],  # any order is allowed; clients must use "index"
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _send(self, status: int, payload: Any) -> None:
        self._send_bytes(status, json.dumps(payload).encode())

    def _send_bytes(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _inputs(body: dict[str, Any]) -> list[str]:
    value = body.get("input", [])
    return [value] if isinstance(value, str) else list(value)


def _openai_error(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}
