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

from signet.app import SignetApp
from signet.config import Config

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


def test_signet_export_then_post_import_on_either_backend(
    serve, backend: str, tmp_path: Path, pg_url_other: str
) -> None:
    """`signet export` (a process) of a workspace on the backend, then `POST /api/import` of
    that bundle into a daemon on the same backend: the memories, their history and deletions
    arrive; a second import adds nothing; and the daemon's own store exports the same."""
    store = (f"store:\n  backend: postgres\n  url: {json.dumps(pg_url_other)}\n"
             if backend == "postgres" else "")
    source_ws = make_workspace(tmp_path / "source", YAML + store)
    source = SignetApp.open(Config.load(source_ws, env={}), embedder=None, llm=None)
    try:
        ids = [source.remember(f"portable fact number {i}").id for i in range(8)]
        source.modify(ids[0], {"content": "portable fact number zero, edited"})
        source.forget(ids[1])
    finally:
        source.close()
    exported = _signet(source_ws, free_port(), "export", str(tmp_path / "bundle"))
    assert exported["tables"]["memories"] == 8 and exported["backend"] == backend
    if backend == "postgres":  # a shared database is no file to copy: refused, naming pg_dump
        env = {**os.environ, "SIGNET_WORKSPACE": str(source_ws), "HOME": str(tmp_path)}
        refused = subprocess.run([sys.executable, "-m", "signet", "backup"], env=env,
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "pg_dump" in refused.stderr, refused.stderr

    s = serve()
    reply = s.client.post("/api/import", json={"path": str(tmp_path / "bundle")})
    assert reply.status_code == 200, reply.text
    assert reply.json()["inserted"]["memories"] == 8 and reply.json()["backend"] == backend
    listed = s.client.get("/api/memories", params={"limit": 100}).json()
    assert listed["total"] == 7  # the forgotten one is kept, deleted
    assert s.client.get(f"/api/memory/{ids[1]}",
                        params={"include_deleted": "true"}).json()["is_deleted"] is True
    events = [e["event"] for e in s.client.get(f"/api/memory/{ids[0]}/history").json()["history"]]
    assert events == ["created", "updated"]
    again = s.client.post("/api/import", json={"path": str(tmp_path / "bundle")}).json()
    assert sum(again["inserted"].values()) == 0
