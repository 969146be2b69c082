"""Two daemons, one PostgreSQL database: they behave as one.

Two real `signet daemon start --foreground` processes, each with its own workspace folder
(identity, logs, pid, install token) and its own port, both on one database of the session's
pgserver, with the bundled embedding model on the deferred write path (each daemon runs its
embed worker). Checked, over HTTP:
- a write through one is recalled through the other at once (keyword), and by meaning once
  either daemon's embed worker has embedded it;
- a token issued by one (its install token; one from the CLI) is accepted by the other, and a
  revocation holds at the very next request to either (no token cache);
- the embed jobs are each run once: one job per memory, completed, leased exactly once (a
  second lease would need the job back in pending: attempts would read 2); so are the
  extraction jobs, which both daemons' extraction workers take from the same queue.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
from daemon_process import daemon_env, free_port, make_workspace

N = 16


def agent_yaml(url: str) -> str:
    return (f"store:\n  backend: postgres\n  url: {json.dumps(url)}\n"
            "embedding:\n  provider: local\n")


def test_two_daemons_on_one_database_act_as_one(tmp_path: Path, daemons, pg_url: str) -> None:
    one = daemons(make_workspace(tmp_path / "one", agent_yaml(pg_url)), free_port())
    two = daemons(make_workspace(tmp_path / "two", agent_yaml(pg_url)), free_port())
    one.wait_healthy(90)
    two.wait_healthy(90)
    with (httpx.Client(base_url=one.url, headers=one.headers(), timeout=60) as a,
          httpx.Client(base_url=two.url, headers=one.headers(), timeout=60) as b):
        # The install token daemon one issued is accepted by daemon two, and the reverse.
        assert b.get("/api/status").status_code == 200
        assert a.get("/api/status", headers=two.headers()).status_code == 200

        ids = []
        for i in range(N):
            writer, reader = (a, b) if i % 2 == 0 else (b, a)
            text = f"Team note {i}: the release train number {i} leaves from platform {i * 7}"
            reply = writer.post("/api/memory/remember", json={"content": text})
            assert reply.status_code == 200, reply.text
            ids.append(reply.json()["id"])
            # Recalled through the other daemon at once: no cache stands between them.
            found = reader.post("/api/memory/recall", json={
                "query": f"release train number {i} platform {i * 7}", "mode": "keyword"})
            assert found.json()["results"][0]["id"] == ids[-1], found.text
            assert reader.get(f"/api/memory/{ids[-1]}").json()["content"] == text

        # An edit through one is what the other reads next.
        patched = a.patch(f"/api/memory/{ids[1]}", json={"importance": 0.9, "version": 1})
        assert patched.status_code == 200, patched.text
        assert b.get(f"/api/memory/{ids[1]}").json()["version"] == 2
        stale = b.patch(f"/api/memory/{ids[1]}", json={"importance": 0.1, "version": 1})
        assert stale.status_code == 409, stale.text

        deadline = time.monotonic() + 120  # against hanging, not a speed target
        while not all_embedded(pg_url):
            assert time.monotonic() < deadline, "the embed workers never emptied the queue"
            time.sleep(0.2)
        by_meaning = b.post("/api/memory/recall", json={
            "query": "which platform does release train 4 leave from", "mode": "vector"})
        assert ids[4] in [h["id"] for h in by_meaning.json()["results"]], by_meaning.text

        # A token from the CLI (on the database) works on both; revoked, on neither.
        workspace_one = {**daemon_env(one.workspace, one.port)}
        created = json.loads(cli(workspace_one, "token", "create", "--role", "agent", "--json"))
        bearer = {"Authorization": f"Bearer {created['token']}"}
        assert a.get("/api/memories", headers=bearer).status_code == 200
        assert b.get("/api/memories", headers=bearer).status_code == 200
        cli(workspace_one, "token", "revoke", created["id"])
        assert b.get("/api/memories", headers=bearer).status_code == 401
        assert a.get("/api/memories", headers=bearer).status_code == 401

        deadline = time.monotonic() + 120
        while not all_done(pg_url, ("extract", "hints")):
            assert time.monotonic() < deadline, "the pipeline workers never emptied the queue"
            time.sleep(0.2)

    with psycopg.connect(pg_url) as conn:
        jobs = conn.execute("SELECT memory_id, status, attempts FROM memory_jobs"
                            " WHERE job_type = 'embed'").fetchall()
        vectors = conn.execute("SELECT count(*) FROM embeddings").fetchone()
        extracted = conn.execute(
            "SELECT j.memory_id, j.status, j.attempts, m.extraction_status FROM memory_jobs j"
            " JOIN memories m ON m.id = j.memory_id WHERE j.job_type = 'extract'").fetchall()
    assert sorted(j[0] for j in jobs) == sorted(ids)  # one job per memory
    assert {(status, attempts) for _, status, attempts in jobs} == {("completed", 1)}
    assert vectors == (N,)
    # The extraction workers of both daemons shared the queue: each memory extracted once.
    assert sorted(j[0] for j in extracted) == sorted(ids)
    assert {tuple(j[1:]) for j in extracted} == {("completed", 1, "completed")}
    assert one.terminate()[0] == 0 and two.terminate()[0] == 0


def all_done(url: str, job_types: tuple[str, ...]) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM memory_jobs WHERE job_type = ANY(%s)"
                           " AND status <> 'completed'", (list(job_types),)).fetchone()
    return row is not None and row[0] == 0


def all_embedded(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FILTER (WHERE status <> 'completed'), count(*)"
                           " FROM memory_jobs WHERE job_type = 'embed'").fetchone()
    return row is not None and row[0] == 0 and row[1] == N


def cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout
