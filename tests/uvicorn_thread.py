"""The daemon's FastAPI app under uvicorn in a thread, on a free loopback port: the one set-up
the in-process server fixtures share (tests/conftest.py `serve`, tests/dashboard/conftest.py,
tests/mcp/test_mcp.py `served`).

Starting waits for uvicorn's `started` flag, polled every 10 ms, then for the server to answer
GET /health with 200, so a test's first request (or a CLI subprocess asking whether a daemon
runs) meets a server that answers. The deadline is only for a machine so loaded that start-up
(lifespan, the MCP session manager) takes long; it stops early when the server thread has
died, and the error says which step never came and what /health last said.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from signet.daemon.startup import bind_socket, make_server

if TYPE_CHECKING:
    from fastapi import FastAPI

START_DEADLINE_S = 60.0
STOP_JOIN_S = 10.0


@dataclass(frozen=True)
class Running:
    url: str
    port: int
    stop: Callable[[], None]  # asks uvicorn to exit, joins its thread, closes the socket


def serve_in_thread(api: FastAPI, start_deadline_s: float = START_DEADLINE_S) -> Running:
    """Serve `api` on 127.0.0.1 in a daemon thread; returns once uvicorn has started."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = make_server(api)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def stop() -> None:
        server.should_exit = True
        thread.join(STOP_JOIN_S)
        sock.close()

    deadline = time.monotonic() + start_deadline_s
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        stop()
        raise AssertionError(f"uvicorn did not start within {start_deadline_s:.0f} s"
                             + ("" if thread.is_alive() else " (its thread died; see the log)"))
    url = f"http://127.0.0.1:{port}"
    last = _wait_answering(url, thread, deadline)
    if last:
        stop()
        raise AssertionError(f"the server listens at {url} but /health did not answer 200 within"
                             f" {start_deadline_s:.0f} s: {last}")
    return Running(url, port, stop)


def _wait_answering(url: str, thread: threading.Thread, deadline: float) -> str:
    """Poll GET /health until it answers 200: "" then, else what it last said."""
    last = "never asked"
    while thread.is_alive():
        try:
            reply = httpx.get(f"{url}/health", timeout=2.0)
            if reply.status_code == 200:
                return ""
            last = f"HTTP {reply.status_code}: {reply.text[:200]}"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            return last
        time.sleep(0.01)
    return f"{last} (the server thread died; see the log)"
