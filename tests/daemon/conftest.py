"""Real daemons for the daemon tests.

`serve` runs the FastAPI app under uvicorn in a thread, on a socket bound to a free loopback
port, around a SignetApp opened on a tmp workspace with the hash embedder: a real server spoken
to over real HTTP. `daemons` starts the whole daemon as a subprocess (see daemon_process.py)
and kills any still running at the end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_process import DaemonProcess
from fastapi import FastAPI

from auth_tokens import auth, install_token
from signet.app import SignetApp
from signet.config import Config
from signet.daemon.server import bind_socket, create_app, make_server
from signet.providers.hash_embedder import HashEmbedder


@dataclass
class Served:
    cfg: Config
    app: SignetApp
    api: FastAPI
    client: httpx.Client
    url: str
    token: str = ""  # the admin token in cfg.token_path; `client` sends it


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """serve(**config_sections) -> a running server; everything stops at teardown."""
    stops: list[Callable[[], None]] = []

    def start(**sections: Any) -> Served:
        cfg = Config.default(tmp_path / f"ws{len(stops)}").replace(**sections)
        app = SignetApp.open(cfg, embedder=HashEmbedder(64))
        api = create_app(app)
        sock = bind_socket("127.0.0.1", 0)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = make_server(api)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started, "uvicorn did not start"
        token = install_token(cfg, app)
        client = httpx.Client(base_url=url, timeout=30, headers=auth(token))

        def stop() -> None:
            client.close()
            server.should_exit = True
            thread.join(10)
            sock.close()
            app.close()

        stops.append(stop)
        return Served(cfg, app, api, client, url, token)

    yield start
    for stop in stops:
        stop()


@pytest.fixture
def daemons() -> Iterator[Callable[..., DaemonProcess]]:
    """daemons(workspace, port[, wrapper]) -> a started DaemonProcess; any still running is
    killed after the test."""
    started: list[DaemonProcess] = []

    def start(workspace: Path, port: int, wrapper: Sequence[str] = ()) -> DaemonProcess:
        started.append(DaemonProcess(workspace, port, wrapper))
        return started[-1]

    yield start
    for daemon in started:
        daemon.kill()
