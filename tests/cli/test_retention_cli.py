"""`signet retention run [--dry-run]` as a real subprocess on a real workspace."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

YAML = (
    "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"
    "retention:\n  tombstoneRetentionMs: 0\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _signet(workspace: Path, *args: str) -> str:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(_free_port()),
           "HOME": str(workspace.parent), "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_dry_run_prints_what_would_go_and_the_run_purges_it(tmp_path: Path) -> None:
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(YAML)
    gone = json.loads(_signet(ws, "--json", "remember", "an old plan"))["id"]
    kept = json.loads(_signet(ws, "--json", "remember", "a current plan"))["id"]
    _signet(ws, "forget", gone)
    dry = json.loads(_signet(ws, "--json", "retention", "run", "--dry-run"))
    assert dry["dry_run"] is True and dry["steps"]["tombstones"] == 1
    assert "would purge" in _signet(ws, "retention", "run", "--dry-run")
    assert json.loads(_signet(ws, "--json", "get", gone))["is_deleted"] is True  # still there
    done = json.loads(_signet(ws, "--json", "retention", "run"))
    assert done["steps"]["tombstones"] == 1 and done["dry_run"] is False
    listed = json.loads(_signet(ws, "--json", "list", "--deleted"))
    assert [m["id"] for m in listed["items"]] == [kept]
