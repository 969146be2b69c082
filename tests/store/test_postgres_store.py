"""What only the PostgreSQL backend has to prove: its migrations' discipline under several
starting daemons, the job lease across processes, the HNSW index, and refusals by name."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import psycopg
import pytest

from signet.errors import MigrationTampered, SchemaTooNew
from signet.store.postgres import migrate
from signet.store.postgres import vectors as pg_vectors
from signet.store.postgres.core import PostgresCore
from signet.types import MemoryFilters

T0 = "2026-11-29T12:00:00.000Z"


def test_migrations_apply_once_and_refuse_an_edited_file(pg_url: str) -> None:
    bundled = migrate.bundled_migrations()
    assert [m.version for m in bundled] == sorted(m.version for m in bundled) and bundled
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate.migrate(conn) == [m.version for m in bundled]
        assert migrate.migrate(conn) == []
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")\
            .fetchone() is not None
        edited = [replace(bundled[0], sql=bundled[0].sql + "\n-- edited\n"), *bundled[1:]]
        with pytest.raises(MigrationTampered, match="001_core"):
            migrate.migrate(conn, edited)
        with pytest.raises(SchemaTooNew):
            migrate.migrate(conn, [])


def test_daemons_starting_at_once_migrate_once(pg_url: str) -> None:
    opened: list[PostgresCore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(PostgresCore.open(pg_url, max_size=2))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for core in opened:
        core.close()
    assert errors == [] and len(opened) == 4
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY version")
        assert all(count == 1 for _, count in rows.fetchall())


_WORKER = """
import json, sys
from signet.store.postgres import vectors as pg_vectors
from signet.store.postgres.core import PostgresCore
core = PostgresCore.open(sys.argv[1], max_size=1)
done = []
while (job := core.lease("2026-11-29T12:00:01.000Z")) is not None:
    core.complete(job.id, "2026-11-29T12:00:01.000Z")
    done.append(job.id)
core.close()
print(json.dumps(done))
"""


def test_each_job_is_leased_once_across_processes(pg_url: str, tmp_path: Path) -> None:
    core = PostgresCore.open(pg_url)
    try:
        ids = {core.enqueue("summary", now=T0) for _ in range(60)}
    finally:
        core.close()
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    workers = [
        subprocess.Popen([sys.executable, str(script), pg_url], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    claimed = [json.loads(w.communicate(timeout=60)[0]) for w in workers]
    flat = [job for batch in claimed for job in batch]
    assert sorted(flat) == sorted(ids) and len(flat) == len(set(flat)) == 60


def test_vector_search_has_an_hnsw_index_and_rescores_exactly(pg_url: str) -> None:
    from signet.normalize import normalize_content
    from signet.types import Actor, NewMemory

    core = PostgresCore.open(pg_url)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    try:
        for i, vector in enumerate(vectors):
            norm = normalize_content(f"memory number {i}")
            core.write_memory(NewMemory(content=f"memory number {i}"), storage=norm.storage,
                               normalized=norm.normalized, content_hash=norm.content_hash,
                               actor=Actor(), now=T0, vector=vector, model="m")
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT to_regclass('embeddings_hnsw_16')").fetchone() != (None,)
        query = vectors[3] + 0.05 * vectors[4]
        query /= np.linalg.norm(query)
        found = core.vector_search(query, model="m", filters=MemoryFilters(), limit=5)
        exact = np.argsort(-(vectors @ query), kind="stable")[:5]
        by_content = {core.get_memory(m).content: s for m, s in found}  # type: ignore[union-attr]
        assert list(by_content) == [f"memory number {i}" for i in exact]
        for i in exact:
            assert by_content[f"memory number {i}"] == pytest.approx(float(vectors[i] @ query),
                                                                     abs=1e-6)
        # The statement can walk the index (its expression and predicate match it): with
        # sequential scans priced out, the plan goes through it, scoped or not.
        for filters in (MemoryFilters(), MemoryFilters(project="alpha")):
            with psycopg.connect(pg_url) as conn, conn.transaction():
                conn.execute("SET LOCAL enable_seqscan = off")
                sql, params = pg_vectors.statement(conn, query, "m", filters, 5)
                plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params))
            assert "Index Scan using embeddings_hnsw_16" in plan, plan
    finally:
        core.close()


def test_the_community_filter_keeps_memories_naming_its_entities(pg_url: str) -> None:
    from signet.normalize import normalize_content
    from signet.types import Actor, NewMemory

    core = PostgresCore.open(pg_url)
    try:
        with core.graph().writing() as graph:
            alpha = graph.upsert_entity("Alpha", agent_id="default", now=T0)
            graph.replace_communities("default", [{"id": "c1", "label": "first", "members": [alpha],
                                                   "modularity": 0.5, "quality": "weak"}], T0)
        ids = {}
        for text in ("a memory about Alpha", "a memory about nothing"):
            norm = normalize_content(text)
            ids[text], _ = core.insert_memory(
                NewMemory(content=text), storage=norm.storage, normalized=norm.normalized,
                content_hash=norm.content_hash, actor=Actor(), now=T0)
        found = core.lexical_search("memory", MemoryFilters(community="c1"), 5)
        assert [m for m, _ in found] == [ids["a memory about Alpha"]]
        assert len(core.lexical_search("memory", MemoryFilters(), 5)) == 2
    finally:
        core.close()


def test_an_unreachable_or_wrong_server_is_a_clear_error_without_the_password(
    pg_server: object,
) -> None:
    import socket

    from signet.errors import StoreError

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    with pytest.raises(StoreError, match=f"127.0.0.1:{port}.*refused") as caught:
        PostgresCore.open(f"postgresql://signet:s3cret@127.0.0.1:{port}/team")
    assert "s3cret" not in str(caught.value) and "signet:***@" in str(caught.value)
    missing = pg_server.get_uri("no_such_database")  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match='database "no_such_database" does not exist'):
        PostgresCore.open(missing)
