"""`signet backup`, `signet export` and `signet import` as real processes: a backup and an
export taken while a real daemon serves writes, imported into a fresh workspace."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx
from daemon_process import free_port, make_workspace

YAML = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


def _signet(ws: Path, port: int, *args: str) -> dict:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": str(port),
           "HOME": str(ws.parent), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "signet", "--json", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_backup_and_export_while_the_daemon_writes_then_import(tmp_path: Path, daemons) -> None:
    ws = make_workspace(tmp_path / "a", YAML)
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy(60)
    stop = threading.Event()
    written: list[str] = []

    def write() -> None:
        with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=30) as client:
            i = 0
            while not stop.is_set():
                reply = client.post("/api/memory/remember", json={"content": f"live note {i}"})
                if reply.status_code == 200:  # 429 when the token's rate limit is reached
                    written.append(reply.json()["id"])
                i += 1
                stop.wait(0.05)

    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=30) as client:
        for i in range(30):
            client.post("/api/memory/remember", json={"content": f"settled fact number {i}"})
    writer = threading.Thread(target=write)
    writer.start()
    try:
        copy = _signet(ws, port, "backup", str(tmp_path / "copy.db"))
        exported = _signet(ws, port, "export", str(tmp_path / "bundle"))
    finally:
        stop.set()
        writer.join()
    daemon.terminate()
    with sqlite3.connect(copy["path"]) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] >= 30
    assert exported["tables"]["memories"] >= 30 and written  # writes went on meanwhile

    fresh = make_workspace(tmp_path / "b", YAML)
    imported = _signet(fresh, free_port(), "import", str(tmp_path / "bundle"))
    assert imported["inserted"]["memories"] == exported["tables"]["memories"]
    listed = _signet(fresh, free_port(), "list", "--limit", "1000")
    assert listed["total"] == exported["tables"]["memories"]
    again = _signet(fresh, free_port(), "import", str(tmp_path / "bundle"))
    assert sum(again["inserted"].values()) == 0
