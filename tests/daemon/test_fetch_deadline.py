"""`documents.fetch_timeout_ms` is one deadline for the whole fetch (connect, every redirect,
the body), through a real daemon (conftest.serve, the documents worker run in the app) against
a real loopback server that answers slowly: a body or the headers trickled a byte at a time and
a chain of slow redirects, each step well inside the limit and the whole far beyond it, fail the
document with an error naming the setting instead of holding the worker until the server is
done."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from signet.config import DocumentsConfig, PipelineConfig

DOCS = "/api/documents"
BODY = b"Slow pages still get read in the end. " * 2  # 76 bytes
TRICKLE_S = 0.1  # between bytes: 7.6 s for the body, each read far inside the limit
HOP_S = 0.6  # before each redirect answers: 6 hops, 3.6 s
LIMIT_MS = 1500


class SlowServer:
    """127.0.0.1: `/trickle` sends BODY one byte per TRICKLE_S; `/slow-headers` sends its
    status line and headers so (before any body: the phase a reply's reads run in until
    the headers are whole); `/hop/N` waits HOP_S and redirects to `/hop/N-1`; `/hop/0`
    answers BODY at once."""

    def __init__(self) -> None:
        # Set once every byte of /slow-headers' head went out: the client waited for all of it.
        self.headers_finished = threading.Event()
        finished = self.headers_finished

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the stdlib's name
                try:
                    self._answer()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what the test wants

            def _answer(self) -> None:
                if self.path == "/slow-headers":
                    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                            b"Content-Length: %d\r\n\r\n" % len(BODY))
                    for byte in head:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(TRICKLE_S)
                    finished.set()
                    self.wfile.write(BODY)
                    return
                if self.path.startswith("/hop/") and self.path != "/hop/0":
                    time.sleep(HOP_S)
                    self.send_response(302)
                    self.send_header("Location", f"/hop/{int(self.path[5:]) - 1}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(BODY)))
                self.end_headers()
                for byte in BODY:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if self.path == "/trickle":
                        time.sleep(TRICKLE_S)

            def log_message(self, *_args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def slow() -> Iterator[SlowServer]:
    server = SlowServer()
    yield server
    server.close()


def test_the_fetch_timeout_is_one_deadline_for_redirects_and_body(serve, slow) -> None:
    s = serve(documents=DocumentsConfig(
        url_fetch_enabled=True, fetch_allowed_hosts=("127.0.0.1",), fetch_timeout_ms=LIMIT_MS,
        fetch_max_redirects=10,
    ), pipeline=PipelineConfig(max_attempts=1))  # one attempt each: a retry shows nothing new
    quick = s.client.post(DOCS, json={"url": f"{slow.url}/hop/0"}).json()
    trickled = s.client.post(DOCS, json={"url": f"{slow.url}/trickle"}).json()
    slow_headers = s.client.post(DOCS, json={"url": f"{slow.url}/slow-headers"}).json()
    redirected = s.client.post(DOCS, json={"url": f"{slow.url}/hop/6"}).json()
    s.app.run_pipeline_until_idle(only=["documents"])
    assert s.client.get(f"{DOCS}/{quick['id']}").json()["status"] == "done"
    for doc in (trickled, slow_headers, redirected):
        shown = s.client.get(f"{DOCS}/{doc['id']}").json()
        assert shown["status"] == "failed" and shown["chunks"] == [], shown
        assert "documents.fetch_timeout_ms" in shown["error"], shown["error"]
    # Cut off at the deadline, not once the server was done sending the headers.
    assert not slow.headers_finished.is_set()
