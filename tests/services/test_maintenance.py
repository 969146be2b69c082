"""Repair and diagnostics on a real database: stale leases, the FTS check and rebuild,
re-embedding, the embeddings audit and health probe, identity files, the effective config and
the recall QA ledger."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from signet.app import SignetApp
from signet.config import (
    Config,
    LlmConfig,
    PipelineConfig,
    PipelineTelemetryConfig,
    StoreConfig,
)
from signet.errors import InvalidInput, NotFound
from signet.identity import MAX_IDENTITY_BYTES
from signet.providers.hash_embedder import HashEmbedder
from signet.store import jobs as jobs_sql
from signet.types import Actor, MemoryFilters, MemoryScope, RecallQuery


def test_release_stale_leases_returns_old_leases_to_the_queue(app) -> None:
    memory_id = app.remember("a memory with an extract job").id
    with app.store.write_tx() as conn:
        job = jobs_sql.lease(conn, "2020-01-01T00:00:00.000Z")
    assert job is not None and job.memory_id == memory_id
    assert app.release_stale_leases(older_than_ms=0)["released"] == 1
    assert app.job(job.id).status == "pending"
    assert app.release_stale_leases()["released"] == 0


def test_the_fts_check_finds_a_damaged_index_and_the_rebuild_repairs_it(app) -> None:
    app.remember("the quick brown fox")
    assert app.fts_check()["ok"] is True
    with app.store.write_tx() as conn:  # drop the index rows behind the trigger's back
        conn.execute("DELETE FROM memories_stem_fts_docsize")
    check = app.fts_check()
    assert check["ok"] is False and check["rows"]["memories_stem_fts"] == 0
    rebuilt = app.fts_rebuild()
    assert rebuilt["check"]["ok"] is True and rebuilt["check"]["rows"]["memories_stem_fts"] == 1


def test_re_embed_enqueues_a_job_for_each_memory_without_a_vector(config, backend, request) -> None:
    if backend == "postgres":
        config = config.replace(
            store=StoreConfig(backend="postgres", url=request.getfixturevalue("pg_url")))
    with SignetApp.open(config, embedder=None) as plain:
        ids = [plain.remember(f"unembedded memory {n}").id for n in range(3)]
    with SignetApp.open(config, embedder=HashEmbedder(32)) as app:
        assert app.embeddings_status()["audit"]["missing"] == 3
        first = app.re_embed()
        assert first["missing"] == 3 and first["enqueued"] == 3
        assert app.re_embed()["already_queued"] == 3  # a second call adds no duplicates
        app.run_pipeline_until_idle(only=["embed"])
        status = app.embeddings_status()
        assert status["audit"]["missing"] == 0 and status["jobs"].get("completed") == 3
        assert {j.memory_id for j in app.jobs(job_type="embed")} == set(ids)


def test_embeddings_health_times_one_call_or_says_there_is_no_provider(app, config) -> None:
    health = app.embeddings_health()
    assert health["ok"] is True and health["dimensions"] == 64 and health["latency_ms"] >= 0
    with SignetApp.open(replace(config, workspace=config.workspace / "b"), embedder=None) as none:
        assert none.embeddings_health()["provider"] == "none"
        assert none.embeddings_status()["audit"] is None


def test_identity_files_are_read_and_written_only_by_name_and_size(app, config) -> None:
    with pytest.raises(NotFound):
        app.identity_file("SOUL.md")
    written = app.write_identity_file("SOUL.md", "# Soul\nkind and brief\n")
    assert written["bytes"] == len("# Soul\nkind and brief\n")
    assert (config.workspace / "SOUL.md").read_text() == "# Soul\nkind and brief\n"
    assert app.identity_file("SOUL.md")["content"].startswith("# Soul")
    for name in ("../agent.yaml", "agent.yaml", "soul.md", "/etc/passwd"):
        with pytest.raises(NotFound):
            app.write_identity_file(name, "x")
    with pytest.raises(InvalidInput):
        app.write_identity_file("USER.md", "é" * (MAX_IDENTITY_BYTES // 2 + 1))
    assert not (config.workspace / "USER.md").exists()


def test_the_effective_config_hides_credentials(tmp_path) -> None:
    cfg = Config.default(tmp_path).replace(llm=LlmConfig(
        provider="command", command=("mytool", "--api-key", "sk-123"),
        base_url="https://user:sk-456@example.com/v1",
    ))
    with SignetApp.open(cfg, embedder=None, llm=None) as app:
        view = app.effective_config()
    text = json.dumps(view)
    assert "sk-123" not in text and "sk-456" not in text
    assert view["llm"]["command"] == ["mytool", "[redacted]"]
    assert view["llm"]["base_url"] == "https://[redacted]@example.com/v1"
    assert view["pipeline"]["telemetry"]["memory_search_qa_enabled"] is False
    assert view["workspace"] == str(tmp_path)


def _qa_config(config: Config) -> Config:
    return config.replace(pipeline=PipelineConfig(
        telemetry=PipelineTelemetryConfig(memory_search_qa_enabled=True)
    ))


def test_the_recall_qa_ledger_records_each_recall_only_when_enabled(app, config) -> None:
    app.remember("orchids need indirect light")
    app.recall(RecallQuery("orchids light"))
    with pytest.raises(NotFound):
        app.search_ledger()
    tables = app.store.reader().execute(
        "SELECT name FROM sqlite_master WHERE name = 'memory_search_telemetry'").fetchall()
    assert tables == []
    app.close()

    with SignetApp.open(_qa_config(config), embedder=HashEmbedder(64)) as qa:
        qa.recall(RecallQuery("orchids light", filters=MemoryFilters(project=None)),
                  actor=Actor(agent_id="agent-a", session_id="s1"), route="http")
        qa.recall(RecallQuery("zebra xylophone"), actor=Actor(agent_id="agent-b"),
                  scope=MemoryScope(agent_id="agent-b"))
        everything = qa.search_ledger()
        assert everything["total"] == 2
        newest, oldest = everything["items"]
        assert oldest["query"] == "orchids light" and oldest["route"] == "http"
        # An unscoped recall spans every agent, whoever asked: it is no one agent's row.
        assert oldest["agent_id"] is None and oldest["session_key"] == "s1"
        assert newest["agent_id"] == "agent-b"
        assert oldest["result_count"] == 1 and oldest["no_hits"] is False
        assert oldest["results"][0]["content"] == "orchids need indirect light"
        assert oldest["timings"] and oldest["duration_ms"] >= 0 and oldest["method"]
        assert newest["no_hits"] is True and newest["top_score"] is None
        scoped = qa.search_ledger(agent_id="agent-b")
        assert [row["query"] for row in scoped["items"]] == ["zebra xylophone"]
        assert qa.search_ledger(no_hits=True)["total"] == 1
