"""Fixtures for the knowledge-graph tests: a real workspace database in tmp_path, the hash
embedder, and (for the HTTP routes) a real daemon app served on a free loopback port."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from auth_tokens import auth, install_token
from signet.app import SignetApp
from signet.config import Config
from signet.daemon.server import bind_socket, create_app, make_server
from signet.providers.hash_embedder import HashEmbedder


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.default(tmp_path / "ws")


@pytest.fixture
def app(config: Config) -> Iterator[SignetApp]:
    signet = SignetApp.open(config, embedder=HashEmbedder(64))
    yield signet
    signet.close()


@dataclass
class Served:
    app: SignetApp
    client: httpx.Client


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """serve(**config_sections) -> a running daemon app over real HTTP; stopped at teardown."""
    stops: list[Callable[[], None]] = []

    def start(**sections: Any) -> Served:
        cfg = Config.default(tmp_path / f"served{len(stops)}").replace(**sections)
        signet = SignetApp.open(cfg, embedder=HashEmbedder(64))
        sock = bind_socket("127.0.0.1", 0)
        server = make_server(create_app(signet))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started, "uvicorn did not start"
        client = httpx.Client(
            base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=30,
            headers=auth(install_token(cfg, signet)),  # the token the daemon writes at start
        )

        def stop() -> None:
            client.close()
            server.should_exit = True
            thread.join(10)
            sock.close()
            signet.close()

        stops.append(stop)
        return Served(signet, client)

    yield start
    for stop in stops:
        stop()
