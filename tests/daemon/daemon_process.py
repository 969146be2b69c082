"""Daemon processes for the tests: `python -m signet daemon start --foreground` on a tmp
workspace and a free loopback port, for what only a separate process can show (signals,
kill -9, a second daemon, a bad database). Imported by conftest.py and test_lifecycle.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psycopg

from signet.config import StoreConfig

NO_EMBEDDINGS = "embedding:\n  provider: none\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def daemon_env(workspace: Path, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SIGNET_WORKSPACE=str(workspace), SIGNET_PORT=str(port),
               SIGNET_BIND="127.0.0.1", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    return env


def make_workspace(
    path: Path, agent_yaml: str | None = NO_EMBEDDINGS, store: StoreConfig | None = None
) -> Path:
    """A workspace folder with this agent.yaml; on `store` (conftest.py `suite_store`) when
    it is PostgreSQL, which the agent.yaml then names."""
    path.mkdir(parents=True, exist_ok=True)
    if store is not None and store.backend == "postgres":
        agent_yaml = (agent_yaml or "") + (
            f"store:\n  backend: postgres\n  url: {json.dumps(store.url)}\n")
    if agent_yaml is not None:
        (path / "agent.yaml").write_text(agent_yaml)
    return path


def store_rows(workspace: Path, store: StoreConfig, sql: str) -> list[tuple[Any, ...]]:
    """Rows of one SELECT on the workspace's store, read behind the daemon's back."""
    if store.backend == "postgres":
        with psycopg.connect(store.url) as pg:
            return [tuple(row) for row in pg.execute(sql.encode("utf-8")).fetchall()]
    db = sqlite3.connect(f"file:{workspace / 'memory' / 'memories.db'}?mode=ro", uri=True)
    try:
        return list(db.execute(sql).fetchall())
    finally:
        db.close()


class DaemonProcess:
    """`python -m signet daemon start --foreground` on a workspace and port of the test's."""

    def __init__(self, workspace: Path, port: int, wrapper: Sequence[str] = ()) -> None:
        """`wrapper`: a command that runs the daemon's argv (e.g. setpriv dropping privileges)."""
        self.workspace = workspace
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
            env=daemon_env(workspace, port), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )

    def headers(self) -> dict[str, str]:
        """The Authorization header with the admin token the daemon wrote at start."""
        token = (self.workspace / ".daemon" / "token").read_text("ascii").strip()
        return {"Authorization": f"Bearer {token}"}

    def wait_healthy(self, timeout_s: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}: {self.stderr()}")
            try:
                reply = httpx.get(f"{self.url}/health", timeout=0.5)
                # `starting`: the API is still being built behind /health (daemon/startup.py)
                if (reply.status_code == 200 and reply.json()["pid"] == self.proc.pid
                        and not reply.json().get("starting")):
                    return dict(reply.json())
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError("daemon did not answer /health in time")

    def wait_serving(self, timeout_s: float = 60) -> None:
        """/health, then the API behind it (built after /health answers, daemon/startup.py):
        for a test whose first request is a hook's, whose budget may not cover the build."""
        self.wait_healthy(timeout_s)
        reply = httpx.get(f"{self.url}/api/status", headers=self.headers(), timeout=timeout_s)
        assert reply.status_code == 200, reply.text

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
