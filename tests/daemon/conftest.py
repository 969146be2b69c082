"""Real daemons for the daemon tests.

`served` runs the FastAPI app under uvicorn in a thread, on a socket bound to a free loopback
port, around a SignetApp opened on a tmp workspace with the hash embedder: a real server spoken
to over real HTTP. `DaemonProcess` runs the whole daemon as `python -m signet daemon start
--foreground` in a subprocess, for what only a separate process can show (signals, kill -9, a
second daemon, a bad database).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from signet.app import SignetApp
from signet.config import Config
from signet.daemon.server import bind_socket, create_app, make_server
from signet.providers.hash_embedder import HashEmbedder

NO_EMBEDDINGS = "embedding:\n  provider: none\n"


@dataclass
class Served:
    cfg: Config
    app: SignetApp
    api: FastAPI
    client: httpx.Client
    url: str


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
        client = httpx.Client(base_url=url, timeout=30)

        def stop() -> None:
            client.close()
            server.should_exit = True
            thread.join(10)
            sock.close()
            app.close()

        stops.append(stop)
        return Served(cfg, app, api, client, url)

    yield start
    for stop in stops:
        stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def daemon_env(workspace: Path, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SIGNET_WORKSPACE=str(workspace), SIGNET_PORT=str(port),
               SIGNET_BIND="127.0.0.1", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    return env


def make_workspace(path: Path, agent_yaml: str | None = NO_EMBEDDINGS) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if agent_yaml is not None:
        (path / "agent.yaml").write_text(agent_yaml)
    return path


class DaemonProcess:
    """`python -m signet daemon start --foreground` on a workspace and port of the test's."""

    def __init__(self, workspace: Path, port: int) -> None:
        self.workspace = workspace
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
            env=daemon_env(workspace, port), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )

    def wait_healthy(self, timeout_s: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}: {self.stderr()}")
            try:
                reply = httpx.get(f"{self.url}/health", timeout=0.5)
                if reply.status_code == 200 and reply.json()["pid"] == self.proc.pid:
                    return dict(reply.json())
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError("daemon did not answer /health in time")

    def finish(self, timeout_s: float = 30) -> tuple[int, str]:
        """Wait for the process to end; its exit code and stderr."""
        _out, err = self.proc.communicate(timeout=timeout_s)
        return self.proc.returncode, err

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr else ""

    def terminate(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        return self.finish()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
def daemons() -> Iterator[Callable[[Path, int], DaemonProcess]]:
    """daemons(workspace, port) -> a started DaemonProcess; any still running is killed after."""
    started: list[DaemonProcess] = []

    def start(workspace: Path, port: int) -> DaemonProcess:
        started.append(DaemonProcess(workspace, port))
        return started[-1]

    yield start
    for daemon in started:
        daemon.kill()
