"""`signet store migrate --to postgres://...`: a real workspace (SQLite, written through the
app) copied into a real PostgreSQL server, verified, resumed after an interruption, and a
difference caught."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from signet.app import SignetApp
from signet.config import Config, PipelineTelemetryConfig, StoreConfig
from signet.errors import Conflict
from signet.providers.hash_embedder import HashEmbedder
from signet.services.store_copy import migrate_to_postgres
from signet.store import search_telemetry
from signet.store.backend import SqliteCore
from signet.store.choose import open_backend
from signet.store.db import Store
from signet.store.pipeline import SqlitePipeline
from signet.store.postgres.copy_tables import NOT_COPIED, NOT_STATE, TABLES
from signet.store.postgres.core import PostgresCore
from signet.store.signing_key import file_key, workspace_key_path
from signet.types import MemoryFilters, RecallQuery


@pytest.fixture
def workspace(tmp_path: Path) -> Config:
    config = Config.default(tmp_path / "ws")
    embedder = HashEmbedder(64)
    with SignetApp.open(config, embedder=embedder, llm=None) as app:
        for i in range(7):
            app.remember(f"Team fact number {i}: the build uses cache shard {i * 11}",
                         tags=["team"], project="core", embed_inline=True)
        gone = app.remember("A memory that was forgotten", embed_inline=True).id
        app.forget(gone)
        app.import_transcript(harness="generic", session_id="s1", project="core",
                              content="User: the deploy window is Tuesday\nAssistant: Noted.")
    file_key(workspace_key_path(config.workspace))
    return config


def _cli(config: Config, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(config.workspace),
           "HOME": str(config.workspace.parent), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "signet", "--json", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_copy_verifies_and_the_copy_serves_the_same_memories(
    workspace: Config, pg_url: str
) -> None:
    done = _cli(workspace, "store", "migrate", "--to", pg_url, "--batch", "3")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["mismatched"] == [] and report["signing_key"] == "same"
    assert report["counts"]["memories"] == {"sqlite": 8, "postgres": 8}
    assert report["counts"]["memory_history"]["postgres"] >= 9
    assert report["counts"]["embeddings"]["postgres"] == 8
    assert report["counts"]["session_transcripts"] == {"sqlite": 1, "postgres": 1}
    assert report["counts"]["summary_jobs"]["postgres"] == 1
    assert "session_transcripts" not in report["left_behind"]
    assert "store migrate: memories 3/8" in done.stderr  # progress per batch

    backend = open_backend(StoreConfig(backend="postgres", url=pg_url), sqlite_path=Path("unused"),
                           key_path=Path("unused"))
    core = backend.core
    try:
        assert core.signing_key() == workspace_key_path(workspace.workspace).read_bytes()
        hits = core.lexical_search("cache shard", MemoryFilters(project="core"), 10)
        assert len(hits) == 7
        memory = core.get_memory(hits[0][0])
        assert memory is not None and memory.tags == ("team",)
        query = HashEmbedder(64).embed([memory.content])[0]
        best = core.vector_search(query, model=HashEmbedder(64).model, filters=MemoryFilters(),
                                  limit=1)
        assert best[0][0] == memory.id and best[0][1] == pytest.approx(1.0, abs=1e-5)
        found = backend.sessions().search("deploy window", agent_id=None, project="core", limit=3)
        assert [row.session_id for row, _score, _snip in found] == ["s1"]
    finally:
        core.close()


def test_an_interrupted_copy_resumes(workspace: Config, pg_url: str) -> None:
    class Stop(Exception):
        pass

    def stop_after_first_batch(table: str, done: int, total: int) -> None:
        if table == "memories" and done >= 2:
            raise Stop

    with pytest.raises(Stop):
        migrate_to_postgres(workspace, pg_url, batch=2, progress=stop_after_first_batch)
    report = migrate_to_postgres(workspace, pg_url, batch=2)
    assert report.ok, report.to_dict()
    assert report.copied["memories"] == 6  # the first 2 arrived before the interruption


def test_a_row_changed_after_the_copy_is_reported(workspace: Config, pg_url: str) -> None:
    assert migrate_to_postgres(workspace, pg_url).ok
    store = Store.open(workspace.db_path)
    with store.write_tx() as conn:
        conn.execute("UPDATE memories SET content = 'edited', version = version + 1"
                     " WHERE rowid = 1")
    store.close()
    done = _cli(workspace, "store", "migrate", "--to", pg_url)
    assert done.returncode != 0
    assert "the copy does not match (tables: memories)" in done.stderr


def test_tables_not_copied_are_named_with_whether_postgres_has_them(
    workspace: Config, pg_url: str
) -> None:
    store = Store.open(workspace.db_path)
    with store.write_tx() as conn:  # an old workspace: the legacy key table, a projection cache
        conn.execute("INSERT INTO idempotency_keys (key, memory_id, response, created_at)"
                     " VALUES ('k1', NULL, '{}', '2026-01-01T00:00:00Z')")
        conn.execute("INSERT INTO umap_cache (dimensions, embedding_count, result_json,"
                     " cached_at) VALUES (2, 8, '{}', '2026-01-01T00:00:00Z')")
    store.close()
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace.workspace),
           "HOME": str(workspace.workspace.parent), "OMP_NUM_THREADS": "1", "COLUMNS": "400"}
    done = subprocess.run([sys.executable, "-m", "signet", "store", "migrate", "--to", pg_url],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    kept = next(line for line in lines if "PostgreSQL has the table" in line)
    gone = next(line for line in lines if "no such table on PostgreSQL" in line)
    assert "umap_cache (1 rows; a cache" in kept and "idempotency_keys" not in kept
    assert "idempotency_keys (1 rows; retired" in gone and "umap_cache" not in gone
    assert "not on PostgreSQL yet" not in done.stdout


def test_the_url_must_be_postgres(workspace: Config) -> None:
    done = _cli(workspace, "store", "migrate", "--to", "mysql://x")
    assert done.returncode == 2 and "postgresql:// URL" in done.stderr


def test_copy_back_into_a_new_workspace_round_trips(
    workspace: Config, pg_url: str, tmp_path: Path
) -> None:
    assert _cli(workspace, "store", "migrate", "--to", pg_url).returncode == 0
    other = Config.default(tmp_path / "other")
    other.workspace.mkdir()
    done = _cli(other, "store", "migrate", "--from", pg_url, "--batch", "4")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["direction"] == "from" and report["signing_key"] == "same"
    assert report["counts"]["memories"] == {"sqlite": 8, "postgres": 8}
    assert report["copied"]["memories"] == 8  # rows, not the changes its triggers made
    assert report["copied"]["embeddings"] == 8
    assert (workspace_key_path(other.workspace).read_bytes()
            == workspace_key_path(workspace.workspace).read_bytes())
    with SignetApp.open(other, embedder=HashEmbedder(64), llm=None) as app:
        found = app.recall(RecallQuery("cache shard", mode="keyword",
                                       filters=MemoryFilters(project="core")))
        assert len(found.hits) == 7
        sessions = app.session_search("deploy window")["items"]
        assert [x["session_id"] for x in sessions] == ["s1"]  # the FTS index followed
    again = json.loads(_cli(other, "store", "migrate", "--from", pg_url).stdout)
    assert again["ok"] and sum(again["copied"].values()) == 0  # resumable: nothing twice


def test_documents_with_their_connector_and_chunks_go_both_ways(
    workspace: Config, pg_url: str, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "orchard.md").write_text("# Orchard\n\nThe pear trees are pruned in winter.")
    with SignetApp.open(workspace, embedder=HashEmbedder(64), llm=None) as app:
        connector = app.connectors.add(vault, project="core")
        app.connectors.sync(connector["id"])
        app.run_pipeline_until_idle(only=["documents", "embed"])
        doc = app.documents.list()["items"][0]
    report = migrate_to_postgres(workspace, pg_url, batch=2)
    assert report.ok, report.to_dict()
    for table in ("connectors", "documents", "document_memories"):
        assert report.counts[table][0] == report.counts[table][1] >= 1, table
        assert table not in report.left_behind
    other = Config.default(tmp_path / "other")
    other.workspace.mkdir()
    done = _cli(other, "store", "migrate", "--from", pg_url)
    assert done.returncode == 0, done.stderr
    with SignetApp.open(other, embedder=HashEmbedder(64), llm=None) as app:
        shown = app.documents.get(doc["id"])
        assert shown["status"] == "done" and shown["connector_id"] == connector["id"]
        chunk = app.get(shown["chunks"][0]["memory_id"])
        assert "pear trees" in chunk.content and chunk.source_id == doc["id"]
        assert app.connectors.get(connector["id"])["files"] == 1


def test_the_knowledge_graph_goes_over_and_back(tmp_path: Path, pg_url: str) -> None:
    """Entities, aliases, relations, mentions (WITHOUT ROWID on SQLite), aspects, attributes,
    dependencies, pins and communities copy over in small batches, verify, serve a postgres
    app's graph and traversal, and come back."""
    config = Config.default(tmp_path / "ws")
    with SignetApp.open(config, embedder=HashEmbedder(64), llm=None) as app:
        car = app.remember("I drive a Ford Mustang to work", embed_inline=True, graph={
            "entities": [{"name": "Ford Mustang", "aliases": ["my car"]}, "User"],
            "attributes": [{"entity": "User", "aspect": "vehicles", "key": "drives",
                            "value": "Ford Mustang"}],
            "dependencies": [{"source": "Ford Mustang", "target": "User", "type": "owned_by"}],
            "relations": [{"source": "User", "target": "Ford Mustang", "type": "drives"}],
        }).id
        app.remember("The Ford Mustang needs an air filter", embed_inline=True)  # inline-linked
        app.graph.pin(app.graph.find("User"), weight=2)
        app.graph.detect_communities()
        before = app.graph.stats()
    report = migrate_to_postgres(config, pg_url, batch=1)
    assert report.ok, report.to_dict()
    graph_tables = ("entities", "entity_aliases", "relations", "memory_entity_mentions",
                    "entity_aspects", "entity_attributes", "entity_dependencies",
                    "entity_pinning", "entity_communities")
    assert not set(graph_tables) & set(report.left_behind)
    assert report.counts["memory_entity_mentions"] == (3, 3)
    on_pg = config.replace(store=StoreConfig(backend="postgres", url=pg_url))
    with SignetApp.open(on_pg, embedder=HashEmbedder(64), llm=None) as app:
        assert {k: v for k, v in app.graph.stats().items() if k != "hub_threshold"} == {
            k: v for k, v in before.items() if k != "hub_threshold"}
        found = app.recall(RecallQuery("what does my car need", mode="full", limit=5))
        assert car in {h.memory.id for h in found.hits if h.evidence.traversal is not None}
    other = Config.default(tmp_path / "other")
    other.workspace.mkdir()
    back = _cli(other, "store", "migrate", "--from", pg_url, "--batch", "2")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout)["counts"]["entity_pinning"] == {"sqlite": 1, "postgres": 1}
    with SignetApp.open(other, embedder=HashEmbedder(64), llm=None) as app:
        assert app.graph.entity(app.graph.find("my car"))["name"] == "Ford Mustang"


def test_the_cold_tier_and_the_review_queue_go_over_and_back(
    workspace: Config, pg_url: str, tmp_path: Path
) -> None:
    """The pipeline's tables (PostgreSQL migration 003): cold snapshots keep their ids (history
    cites them as coldId) and PostgreSQL's next id follows them; a parked review comes back."""
    store = Store.open(workspace.db_path)
    try:
        seam = SqlitePipeline(SqliteCore(store), store)
        first = seam.get_memory(store.reader().execute(
            "SELECT id FROM memories WHERE is_deleted = 0 ORDER BY rowid").fetchone()[0])
        assert first is not None
        with seam.write() as tx:
            for _ in range(3):
                cold_id = tx.archive_cold(first, reason="refined", archived_by="pipeline",
                                          now="2026-12-01T00:00:00.000Z")
            review = tx.add_review(
                memory_id=first.id, source_memory_id=None, action="update",
                old_content=first.content, new_content="The build uses no cache shard",
                proposal={"action": "update"}, verdict={"contradicts": True},
                reason="contradicts", now="2026-12-01T00:00:00.000Z", target_version=1,
            )
    finally:
        store.close()
    report = migrate_to_postgres(workspace, pg_url, batch=2)
    assert report.ok, report.to_dict()
    assert report.counts["memories_cold"] == (3, 3) and report.counts["memory_review_queue"] == (1, 1)
    assert "memories_cold" not in report.left_behind

    backend = open_backend(StoreConfig(backend="postgres", url=pg_url), sqlite_path=Path("unused"),
                           key_path=Path("unused"))
    core = backend.core
    try:
        seam_pg = backend.pipeline()
        assert [i.id for i in seam_pg.review_items("pending", limit=10)] == [review]
        with seam_pg.write() as tx:  # the identity continues after the copied ids
            assert tx.archive_cold(first, reason="again", archived_by="pipeline",
                                   now="2026-12-01T00:00:01.000Z") == cold_id + 1
    finally:
        core.close()
    other = Config.default(tmp_path / "other")
    other.workspace.mkdir()
    done = _cli(other, "store", "migrate", "--from", pg_url)
    assert done.returncode == 0, done.stderr
    with SignetApp.open(other, embedder=HashEmbedder(64), llm=None) as app:
        [item] = app.review_queue()
        assert (item.id, item.new_content) == (review, "The build uses no cache shard")


def test_the_hooks_injection_ledger_goes_over_and_back(
    workspace: Config, pg_url: str, tmp_path: Path
) -> None:
    """A session that was given a memory is not given it again after the move, either way."""
    with SignetApp.open(workspace, embedder=None, llm=None) as app:
        memory = app.list(MemoryFilters()).items[0].id
        app.injections.record("tok_a", "sess-1", [memory], "session-start",
                              "2026-12-01T00:00:00.000Z")
    done = _cli(workspace, "store", "migrate", "--to", pg_url)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"]["hook_injections"] == {"sqlite": 1, "postgres": 1}
    assert "hook_injections" not in report["left_behind"]
    other = Config.default(tmp_path / "other")
    other.workspace.mkdir()
    assert _cli(other, "store", "migrate", "--from", pg_url).returncode == 0
    with SignetApp.open(other, embedder=None, llm=None) as app:
        assert app.injections.injected("tok_a", "sess-1", [memory]) == {memory}


SKILL = """---
name: deploy-fly
description: Deploy the web app to Fly.io with flyctl
role: devops
---
# Deploying
Run `flyctl deploy` from the repository root, then check `flyctl status`.
"""
FACT = "The staging database is restored from the nightly dump every Sunday"


def _with_qa_ledger(config: Config) -> Config:
    return config.replace(pipeline=dataclasses.replace(
        config.pipeline, telemetry=PipelineTelemetryConfig(memory_search_qa_enabled=True)))


def _memory_side_tables(app: SignetApp) -> dict[str, Any]:
    """A skill used once (positive feedback), a fact written under an idempotency key and
    corrected, one maintenance run and one recall in the QA ledger."""
    folder = app.config.workspace / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    app.reconcile_skills()
    [skill] = app.list_skills()
    app.feedback(skill["memory_id"], "positive")
    first = app.remember(FACT, idempotency_key="retry-1", embed_inline=True)
    app.feedback(first.id, "correction", correction_text="It is restored every Saturday")
    run = app.run_maintenance(execute=True)
    app.recall(RecallQuery("staging database dump"))
    [skill] = app.list_skills()
    actions = app.maintenance_report()["recent_actions"]
    assert actions  # the run re-embedded the skill's memory
    return {"skill": skill, "fact": first, "run": run["id"], "actions": actions}


def _behaves_as_before(app: SignetApp, before: dict[str, Any]) -> None:
    """On the other store: the skill keeps its use, a retry replays the first answer (and
    other content under the key is refused), the feedback and the run are there."""
    [skill] = app.list_skills()
    assert skill == before["skill"]
    assert app.reconcile_skills()["added"] == []
    fact = before["fact"]
    replay = app.remember(FACT, idempotency_key="retry-1")
    assert (replay.id, replay.deduped, replay.memory.version) == (fact.id, False, 1)
    with pytest.raises(Conflict):
        app.remember("Another fact entirely", idempotency_key="retry-1")
    feedback = app.memory.core.feedback_for(fact.id)
    assert [(f.feedback_type, f.correction_text) for f in feedback] == [
        ("correction", "It is restored every Saturday")]
    maintenance = app.maintenance_report()
    assert [r["id"] for r in maintenance["runs"]] == [before["run"]]
    assert maintenance["recent_actions"] == before["actions"]
    assert [row["query"] for row in app.search_ledger()["items"]] == ["staging database dump"]


def test_feedback_skills_idempotency_keys_and_maintenance_go_over_and_back(
    tmp_path: Path, pg_url: str
) -> None:
    config = _with_qa_ledger(Config.default(tmp_path / "ws"))
    with SignetApp.open(config, embedder=HashEmbedder(64), llm=None) as app:
        before = _memory_side_tables(app)
    done = _cli(config, "store", "migrate", "--to", pg_url, "--batch", "1")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"], report
    for table, rows in (("agent_feedback", 2), ("skill_meta", 1), ("idempotency_scoped_keys", 1),
                        ("maintenance_runs", 1), ("memory_search_telemetry", 1)):
        assert report["counts"][table] == {"sqlite": rows, "postgres": rows}, table
        assert report["copied"][table] == rows, table
        assert table not in report["left_behind"], table
    assert not set(report["left_behind"]) - {"umap_cache"}, report["left_behind"]

    on_pg = config.replace(store=StoreConfig(backend="postgres", url=pg_url))
    with SignetApp.open(on_pg, embedder=HashEmbedder(64), llm=None) as app:
        _behaves_as_before(app, before)

    other = _with_qa_ledger(Config.default(tmp_path / "other"))
    other.workspace.mkdir()
    (other.workspace / "skills").symlink_to(config.workspace / "skills")
    back = _cli(other, "store", "migrate", "--from", pg_url, "--batch", "1")
    assert back.returncode == 0, back.stderr
    report = json.loads(back.stdout)
    assert report["ok"] and report["counts"]["skill_meta"] == {"sqlite": 1, "postgres": 1}
    assert report["left_behind"] == {}, report["left_behind"]
    with SignetApp.open(other, embedder=HashEmbedder(64), llm=None) as app:
        _behaves_as_before(app, before)


def test_every_table_of_either_schema_is_copied_or_named_with_why(
    tmp_path: Path, pg_url: str
) -> None:
    """A table a migration adds must be copied (TABLES) or skipped with a reason (NOT_COPIED,
    or NOT_STATE for bookkeeping and derived indexes): the report's lists stay true."""
    store = Store.open(tmp_path / "signet.db")
    try:
        with store.write_tx() as conn:
            search_telemetry.ensure(conn)  # the optional table, as once switched on
        sqlite = {r[0] for r in store.reader().execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite_stat%'")}
    finally:
        store.close()
    core = PostgresCore.open(pg_url, max_size=1)
    try:
        with core.pool.connection() as conn:
            postgres = {str(r[0]) for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    finally:
        core.close()
    copied = {t.name for t in TABLES}
    assert copied <= sqlite & postgres
    decided = copied | set(NOT_COPIED) | NOT_STATE
    fts = {n for n in sqlite if "_fts" in n}  # FTS5 tables and their shadows: follow the rows
    assert sqlite - fts - decided == set()
    assert postgres - decided == set()
    assert set(NOT_COPIED) | NOT_STATE <= sqlite | postgres  # nothing stale named
