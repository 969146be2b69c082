"""The daemon's FastAPI app under uvicorn in a thread, on a free loopback port: the one set-up
the in-process server fixtures share (tests/conftest.py `serve`, tests/dashboard/conftest.py,
tests/mcp/test_mcp.py `served`).

Starting waits for uvicorn's `started` flag, polled every 10 ms, so it returns as soon as the
server listens; the deadline is only for a machine so loaded that start-up (lifespan, the MCP
session manager) takes long, and it stops early when the server thread has died.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from signet.daemon.server import bind_socket, make_server

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
    return Running(f"http://127.0.0.1:{port}", port, stop)
