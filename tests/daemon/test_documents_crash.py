"""kill -9 during a document ingest (a real daemon process, the bundled embedding model): the
document stays visible at its step with no chunk written, and a restarted daemon finishes it
with exactly one chunk set; on PostgreSQL, another daemon on the same database finishes it."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import httpx
import psycopg
from daemon_process import free_port, make_workspace

# Inline: the chunks are embedded before their write, so the kill lands while the model runs
# (deferred, the default, would write them at once and leave the vectors to the embed worker).
YAML = """\
embedding:
  write_path: inline
memory:
  pipelineV2:
    enabled: false
    leaseTimeoutMs: 500
    documentChunkSize: 200
    documentChunkOverlap: 0
"""
PARAGRAPHS = [f"Entry {i}: the warehouse in district {i % 17} received crate {i} of tiles."
              for i in range(400)]


def _status(client: httpx.Client, doc_id: str) -> dict:
    reply = client.get(f"/api/documents/{doc_id}")
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_a_kill_mid_ingest_leaves_no_half_chunk_set_and_the_document_resumes(
    tmp_path: Path, daemons
) -> None:
    ws = make_workspace(tmp_path / "ws", YAML)
    port = free_port()
    first = daemons(ws, port)
    first.wait_healthy(60)
    with httpx.Client(base_url=first.url, headers=first.headers(), timeout=30) as client:
        reply = client.post("/api/documents", json={"content": "\n\n".join(PARAGRAPHS)})
        assert reply.status_code == 202, reply.text
        doc_id = reply.json()["id"]
        deadline = time.monotonic() + 60
        while _status(client, doc_id)["status"] != "embedding":
            assert time.monotonic() < deadline, "the document never reached embedding"
            time.sleep(0.01)
    first.kill()  # SIGKILL in the middle of embedding the chunks
    with sqlite3.connect(ws / "memory" / "memories.db") as conn:
        status, chunk_count = conn.execute(
            "SELECT status, chunk_count FROM documents WHERE id = ?", (doc_id,)).fetchone()
        written = conn.execute("SELECT count(*) FROM memories WHERE source_id = ?",
                               (doc_id,)).fetchone()[0]
    assert status == "embedding" and chunk_count > 150 and written == 0

    second = daemons(ws, port)
    second.wait_healthy(60)
    with httpx.Client(base_url=second.url, headers=second.headers(), timeout=30) as client:
        deadline = time.monotonic() + 120
        while (doc := _status(client, doc_id))["status"] != "done":
            assert doc["status"] != "failed", doc["error"]
            assert time.monotonic() < deadline, f"not resumed: {doc['status']}"
            time.sleep(0.2)
    second.terminate()
    with sqlite3.connect(ws / "memory" / "memories.db") as conn:
        rows = conn.execute(
            "SELECT m.id, d.chunk_index FROM memories m JOIN document_memories d"
            " ON d.memory_id = m.id WHERE m.source_id = ? AND m.is_deleted = 0", (doc_id,)
        ).fetchall()
        total = conn.execute("SELECT count(*) FROM memories WHERE source_id = ?",
                             (doc_id,)).fetchone()[0]
    assert len(rows) == total == chunk_count  # one chunk set, nothing duplicated
    assert sorted(i for _m, i in rows) == list(range(chunk_count))


def test_on_postgres_a_daemon_killed_mid_ingest_is_finished_by_another(
    tmp_path: Path, daemons, pg_url: str
) -> None:
    """Two daemons on one database: the first is killed while it embeds a document's chunks;
    the second (its own workspace) takes the job back once the lease is stale and writes one
    chunk set; the job was leased twice, by the two, and completed once."""
    yaml = f"store:\n  backend: postgres\n  url: {json.dumps(pg_url)}\n{YAML}"
    first = daemons(make_workspace(tmp_path / "one", yaml), free_port())
    first.wait_healthy(90)
    with httpx.Client(base_url=first.url, headers=first.headers(), timeout=30) as client:
        reply = client.post("/api/documents", json={"content": "\n\n".join(PARAGRAPHS)})
        assert reply.status_code == 202, reply.text
        doc_id = reply.json()["id"]
        deadline = time.monotonic() + 60
        while _status(client, doc_id)["status"] != "embedding":
            assert time.monotonic() < deadline, "the document never reached embedding"
            time.sleep(0.01)
    first.kill()  # SIGKILL in the middle of embedding the chunks
    with psycopg.connect(pg_url) as conn:
        status, chunk_count = conn.execute(
            "SELECT status, chunk_count FROM documents WHERE id = %s", (doc_id,)).fetchone()
        written = conn.execute("SELECT count(*) FROM memories WHERE source_id = %s",
                               (doc_id,)).fetchone()[0]
    assert status == "embedding" and chunk_count > 150 and written == 0

    second = daemons(make_workspace(tmp_path / "two", yaml), free_port())
    second.wait_healthy(90)
    with httpx.Client(base_url=second.url, headers=second.headers(), timeout=30) as client:
        deadline = time.monotonic() + 150  # the reaper runs at start, then every minute
        while (doc := _status(client, doc_id))["status"] != "done":
            assert doc["status"] != "failed", doc["error"]
            assert time.monotonic() < deadline, f"not resumed: {doc['status']}"
            time.sleep(0.2)
    second.terminate()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT m.id, d.chunk_index FROM memories m JOIN document_memories d"
            " ON d.memory_id = m.id WHERE m.source_id = %s AND NOT m.is_deleted", (doc_id,)
        ).fetchall()
        total = conn.execute("SELECT count(*) FROM memories WHERE source_id = %s",
                             (doc_id,)).fetchone()[0]
        jobs = conn.execute("SELECT status, attempts FROM memory_jobs WHERE document_id = %s",
                            (doc_id,)).fetchall()
    assert len(rows) == total == chunk_count  # one chunk set, nothing duplicated
    assert sorted(i for _m, i in rows) == list(range(chunk_count))
    assert jobs == [("completed", 2)]
