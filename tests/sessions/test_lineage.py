"""Thread heads and the lineage DAG: eight sessions of a project roll into an arc, arcs into an
epoch; the lineage walks from a memory up to the epoch and from the epoch down to the
transcripts; the artifact index is rebuilt from the markdown files, tombstones honoured."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from fakes.transcripts import claude_code, conversation
from signet.app import SignetApp
from signet.config import Config
from signet.errors import NotFound
from signet.providers.hash_embedder import HashEmbedder
from signet.types import MemoryScope

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def summarise_sessions(app: SignetApp, n: int, project: str = "atlas") -> None:
    for i in range(n):
        turns = conversation(6, decision=i == 2, topic=f"the atlas module {i}")
        text = claude_code(turns, session_id=f"{project}-{i}", start=T0 + timedelta(days=i))
        app.import_transcript(harness="claude-code", content=text, project=project)
    app.run_pipeline_until_idle(only=("summary",))


def test_eight_sessions_of_a_project_roll_into_an_arc_walkable_up_and_down(app: SignetApp) -> None:
    summarise_sessions(app, 9)
    threads = app.threads()["items"]
    assert threads == [{"agent_id": "default", "thread": "project:atlas", "project": "atlas",
                        "summaries": 9, "arcs": 1, "epochs": 0, "last": threads[0]["last"]}]
    arc_file = app.config.workspace / "memory" / "threads" / "project-atlas" / "arc-0001.md"
    arc = arc_file.read_text("utf-8")
    assert "kind: arc" in arc and "## Decisions\n- We decided to use banker's rounding" in arc
    assert arc.count("memory/sessions/") >= 16  # front matter and body list the eight summaries
    head = app.thread("project:atlas")
    assert [p["source_kind"] for p in head["pieces"]] == ["arc", "summary"]  # the ninth waits
    # Up: from the summary memory of session 2 to its session, summary and arc.
    memory = next(m for m in app.list(limit=50).items if m.source_id == "atlas-2")
    up = app.lineage(memory.id)["up"]
    assert [u["kind"] for u in up] == ["session", "summary", "arc"]
    assert up[0]["transcript"].startswith("memory/transcripts/claude-code/atlas-2--")
    # Down: from the arc to eight summaries, each with its session's transcript.
    down = app.lineage(up[2]["id"])["down"]
    assert [d["kind"] for d in down] == ["summary", "session"] * 8
    assert [d["id"] for d in down if d["kind"] == "session"] == [f"atlas-{i}" for i in range(8)]
    session_view = app.lineage("atlas-2")
    assert [u["kind"] for u in session_view["up"]] == ["summary", "arc"]
    assert memory.id in [d.get("id") for d in session_view["down"]]


def test_arcs_roll_into_an_epoch_and_the_epoch_leads_down_to_transcripts(config: Config) -> None:
    small = dataclasses.replace(config.sessions, arc_size=2, epoch_size=2)
    with SignetApp.open(config.replace(sessions=small), embedder=HashEmbedder(64), llm=None) as app:
        summarise_sessions(app, 4)
        (thread,) = app.threads()["items"]
        assert (thread["summaries"], thread["arcs"], thread["epochs"]) == (4, 2, 1)
        epoch = app.thread("project:atlas")["pieces"][0]
        assert epoch["source_kind"] == "epoch"
        down = app.lineage(epoch["artifact_id"])["down"]
        assert [d["kind"] for d in down] == ["arc", "summary", "session", "summary", "session"] * 2
        assert all(d["transcript"] for d in down if d["kind"] == "session")


def test_deleting_the_index_and_reindexing_restores_it(app: SignetApp) -> None:
    summarise_sessions(app, 9)
    conn = app.store.reader()
    before = [tuple(r) for r in conn.execute(
        "SELECT source_path, source_kind, artifact_id, thread_key, parent_path, condenses,"
        " memory_sentence, session_key FROM memory_artifacts ORDER BY source_path")]
    with app.store.write_tx() as wconn:
        wconn.execute("DELETE FROM memory_artifacts")
    assert app.threads()["items"] == []
    report = app.reindex_artifacts()
    assert (report["indexed"], report["errors"]) == (10, [])
    after = [tuple(r) for r in app.store.reader().execute(
        "SELECT source_path, source_kind, artifact_id, thread_key, parent_path, condenses,"
        " memory_sentence, session_key FROM memory_artifacts ORDER BY source_path")]
    assert after == before


def test_a_forgotten_session_stays_gone_when_its_file_comes_back(app: SignetApp) -> None:
    summarise_sessions(app, 2)
    summary = app.config.workspace / "memory" / "sessions" / "2026-11-01-atlas-0--summary.md"
    copy = summary.read_bytes()
    removed = app.session_forget("atlas-0", reason="user asked")
    assert "memory/sessions/2026-11-01-atlas-0--summary.md" in removed["removed_paths"]
    assert not summary.exists()
    with pytest.raises(NotFound):
        app.session_show("atlas-0")
    summary.write_bytes(copy)  # a sync tool or a backup restores the file
    report = app.reindex_artifacts()
    assert (report["indexed"], report["tombstoned"]) == (1, 1)
    assert app.threads()["items"][0]["summaries"] == 1


def test_lineage_of_another_scope_is_not_found(app: SignetApp) -> None:
    summarise_sessions(app, 1)
    with pytest.raises(NotFound):
        app.lineage("atlas-0", scope=MemoryScope(project="other"))
    with pytest.raises(NotFound):
        app.thread("project:atlas", scope=MemoryScope(agent_id="agent-b"))
    assert app.threads(scope=MemoryScope(project="other"))["items"] == []
    assert app.lineage("atlas-0", scope=MemoryScope(project="atlas"))["node"]["id"] == "atlas-0"


def test_a_session_without_a_project_joins_the_thread_of_its_entities_community(app: SignetApp) -> None:
    app.apply_graph({
        "entities": [{"name": "Frankfurt"}, {"name": "Maria"}, {"name": "Stripe"}, {"name": "Oslo"}],
        "dependencies": [{"source": "Maria", "target": "Frankfurt", "strength": 0.9},
                         {"source": "Maria", "target": "Stripe", "strength": 0.9}],
    })
    (community,) = [c for c in app.graph.detect_communities() if c["size"] >= 3] or [None]
    assert community is not None
    text = claude_code(conversation(6), session_id="no-project", cwd="")
    app.import_transcript(harness="claude-code", content=text)
    app.run_pipeline_until_idle(only=("summary",))
    (thread,) = app.threads()["items"]
    assert thread["thread"] == f"community:{community['id']}"
