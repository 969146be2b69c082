"""`bash scripts/start`, run twice as a new user would: both runs succeed, the second leaves
the running daemon (and an up-to-date install) alone, and every step says what it does.

The script installs into SIGNET_VENV, here the virtualenv running these tests (an install
that matches pyproject.toml is skipped, so this costs one `pip install -e .` per venv), and
the workspace, port and HOME are temporary."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_running_scripts_start_twice_succeeds_and_keeps_the_daemon(tmp_path: Path) -> None:
    workspace = tmp_path / "agents"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text("embedding:\n  provider: none\n", encoding="utf-8")
    env = {**os.environ, "SIGNET_VENV": sys.prefix, "SIGNET_WORKSPACE": str(workspace),
           "SIGNET_PORT": str(free_port()), "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("VIRTUAL_ENV", None)

    def start() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(ROOT / "scripts" / "start")], env=env,
                              capture_output=True, text=True, timeout=600)

    try:
        first = start()
        assert first.returncode == 0, first.stderr
        assert "scripts/start: starting the daemon" in first.stderr
        assert "creating the workspace" in first.stderr
        pid = (workspace / ".daemon" / "pid").read_text().strip()
        assert f"pid {pid}" in first.stdout

        second = start()
        assert second.returncode == 0, second.stderr
        assert "already running; leaving it" in second.stderr
        assert "up to date" in second.stderr and "installing" not in second.stderr
        assert (workspace / ".daemon" / "pid").read_text().strip() == pid
        assert f"pid {pid}" in second.stdout
    finally:
        subprocess.run([sys.executable, "-m", "signet", "daemon", "stop"], env=env,
                       capture_output=True, timeout=60)
