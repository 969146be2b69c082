"""Maintenance through its surfaces: `signet maintenance run [--execute] [--json]` as a real
subprocess, `signet status`, and `/api/repair/report` and `/api/repair/run` on a real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from daemon_process import make_workspace

from auth_tokens import auth, issue
from signet.app import SignetApp
from signet.config import Config, RetentionConfig, StoreConfig

FROZEN_YAML = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    autonomous:\n      frozen: true\n"


def signet(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": "1",
           "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def run_json(ws: Path, *args: str) -> dict:
    done = signet(ws, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def break_fts(app: SignetApp) -> None:
    """Damage the lexical index: one FTS5 entry deleted (SQLite); the GIN index over the
    tsvector column dropped, as by an operator's mistake (PostgreSQL)."""
    if app.backend.name == "postgres":
        with app.backend.core.pool.connection() as pg:  # type: ignore[attr-defined]
            pg.execute("DROP INDEX memories_lexical")
        return
    with app.store.write_tx() as conn:
        row = conn.execute("SELECT rowid, content, hints, tags FROM memories LIMIT 1").fetchone()
        conn.execute("INSERT INTO memories_fts(memories_fts, rowid, content, hints, tags)"
                     " VALUES ('delete', ?, ?, ?, ?)", tuple(row))


def broken_workspace(ws: Path) -> None:
    app = SignetApp.open(Config.load(ws, {}), embedder=None, llm=None)
    try:
        app.remember("the quick brown fox")
        app.remember("a lazy dog sleeps")
        break_fts(app)
    finally:
        app.close()


def test_the_cli_observes_then_executes_and_frozen_stops_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    broken_workspace(ws)
    observed = run_json(ws, "maintenance", "run")
    assert observed["problems"] == ["fts"] and observed["actions"] == []
    assert observed["checks"]["fts"]["memories_fts"] == 1
    readable = signet(ws, "maintenance", "run")
    assert "PROBLEM" in readable.stdout and "memories_fts 1" in readable.stdout
    status = signet(ws, "status")
    assert "maintenance" in status.stdout and "problems: fts" in status.stdout

    (ws / "agent.yaml").write_text(FROZEN_YAML)
    frozen = run_json(ws, "maintenance", "run", "--execute")
    assert frozen["skipped"] == ["fts"] and frozen["actions"] == []
    assert run_json(ws, "maintenance", "run")["checks"]["fts"]["memories_fts"] == 1

    (ws / "agent.yaml").write_text("embedding:\n  provider: none\n")
    executed = run_json(ws, "maintenance", "run", "--execute")
    assert [a["action"] for a in executed["actions"]] == ["rebuild_fts"] and executed["ok"]
    report = run_json(ws, "maintenance", "report")
    assert report["ok"] is True and len(report["runs"]) == 5
    assert report["recent_actions"][0]["changed"]["after"]["memories_fts"] == 2


def test_the_report_and_run_routes(serve, backend) -> None:
    served = serve()
    served.app.remember("the quick brown fox")
    break_fts(served.app)
    report = served.client.get("/api/repair/report").json()
    assert report["problems"] == ["fts"] and report["enabled"] is False
    assert report["mode"] == "observe" and report["runs"] == []
    observed = served.client.post("/api/repair/run").json()
    assert observed["mode"] == "observe" and observed["actions"] == []
    executed = served.client.post("/api/repair/run", json={"execute": True}).json()
    assert executed["actions"][0]["action"] == "rebuild_fts" and executed["ok"] is True
    assert served.client.get("/api/repair/report").json()["ok"] is True
    bad = served.client.post("/api/repair/run", json={"execute": "soon"})
    assert bad.status_code in (400, 422)
    reader = auth(issue(served.app, "readonly"))
    assert served.client.post("/api/repair/run", headers=reader).status_code == 403
    scoped = auth(issue(served.app, "admin", project="p"))
    assert served.client.get("/api/repair/report", headers=scoped).status_code == 403


def forget_some(served, n: int) -> list[str]:
    ids = [served.client.post("/api/memory/remember", json={"content": f"old fact {i}"}).json()["id"]
           for i in range(n)]
    for memory_id in ids:
        assert served.client.delete(f"/api/memory/{memory_id}").status_code == 200
    time.sleep(0.01)  # deleted_at strictly before the sweep's cutoff (tombstones kept 0 ms)
    return ids


def test_the_retention_route_purges_expired_tombstones(serve, backend) -> None:
    served = serve(retention=RetentionConfig(tombstone_retention_ms=0))
    ids = forget_some(served, 2)
    dry = served.client.post("/api/retention/run", json={"dry_run": True}).json()
    assert dry["dry_run"] is True and dry["steps"]["tombstones"] == 2
    assert served.client.get(f"/api/memory/{ids[0]}?include_deleted=true").status_code == 200  # nothing changed
    swept = served.client.post("/api/retention/run").json()
    assert swept["steps"]["tombstones"] == 2 and "skipped" not in swept
    assert served.client.get(f"/api/memory/{ids[0]}?include_deleted=true").status_code == 404
    # Every step's table is on both backends: none is named as missing.
    assert swept.get("not_on_backend", []) == []
    reader = auth(issue(served.app, "readonly"))
    assert served.client.post("/api/retention/run", headers=reader).status_code == 403


def test_two_daemons_on_one_postgres_run_retention_once(serve, pg_url: str) -> None:
    shared = {"store": StoreConfig(backend="postgres", url=pg_url),
              "retention": RetentionConfig(tombstone_retention_ms=0)}
    first, second = serve(**shared), serve(**shared)
    ids = forget_some(first, 6)
    # While one daemon sweeps (it holds the retention lock), the other's run does nothing.
    with first.app.operations.ops.exclusive("retention") as held:
        assert held
        skipped = second.client.post("/api/retention/run").json()
    assert skipped["total"] == 0 and "another daemon" in skipped["skipped"]
    assert second.client.get(f"/api/memory/{ids[0]}?include_deleted=true").status_code == 200
    # Both at once: every tombstone is purged exactly once between them.
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda s: s.client.post("/api/retention/run").json(),
                             [first, second]))
    assert sum(r["steps"].get("tombstones", 0) for r in runs) == 6
    assert all(second.client.get(f"/api/memory/{i}?include_deleted=true").status_code == 404
               for i in ids)
