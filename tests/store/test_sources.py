"""The source index (migrations 007 and 012): whole sources in FTS5, kept current by the
writer, one per agent, project and source id."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.store import sources
from signet.store.db import Store


def _app(tmp_path: Path) -> SignetApp:
    return SignetApp.open(Config.default(tmp_path / "ws"), embedder=None)


def _indexed(store: Store) -> dict[str, int]:
    rows = store.reader().execute(
        "SELECT s.source_id, s.members FROM memory_sources s "
        "JOIN memory_sources_fts f ON f.rowid = s.rowid"
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def test_a_batch_indexes_each_source_once_with_all_members(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        app.remember_many(
            [{"content": f"window {n} about sailing", "source_id": "chat-1"} for n in range(5)]
            + [{"content": "a lone note about sailing", "source_id": "chat-2"}]
        )
        # chat-2 has one member: the memory index already ranks it, the source index skips it.
        assert _indexed(app.store) == {"chat-1": 5}
        assert not sources.pending(app.store.reader())
        hits = sources.search(app.store.reader(), "sailing", None, 10)
        assert [h.source_id for h in hits] == ["chat-1"]


def test_a_rolled_back_write_leaves_the_index_unchanged(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        app.remember_many([{"content": f"part {n} on gardens", "source_id": "doc"} for n in range(2)])
        with pytest.raises(RuntimeError), app.store.write_tx() as conn:
            conn.execute(
                "UPDATE memories SET content = 'rewritten text' WHERE source_id = 'doc'"
            )
            raise RuntimeError("abort")
        assert [h.source_id for h in sources.search(app.store.reader(), "gardens", None, 5)] == [
            "doc"
        ]
        assert sources.search(app.store.reader(), "rewritten", None, 5) == []


def test_sources_written_before_the_migration_are_indexed_at_open(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        app.remember_many([{"content": f"chunk {n} of a manual", "source_id": "manual"} for n in range(3)])
        path = app.store.path
    # Simulate a database from before migration 012 (which rebuilds the index per project):
    # index empty, sources unknown.
    store = Store.open(path)
    with store.write_tx() as conn:
        conn.execute("DELETE FROM memory_sources_fts")
        conn.execute("DELETE FROM memory_sources")
        conn.execute("DELETE FROM schema_migrations WHERE version = 12")
    store.close()
    reopened = Store.open(path)
    try:
        assert _indexed(reopened) == {"manual": 3}
    finally:
        reopened.close()


def test_agents_are_kept_apart(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        for agent in ("a", "b"):
            app.remember_many(
                [{"content": f"{agent} notes on kites {n}", "source_id": "same-id", "agent_id": agent}
                 for n in range(2)]
            )
        found = sources.search(app.store.reader(), "kites", "b", 10)
        assert [(h.agent_id, h.source_id) for h in found] == [("b", "same-id")]


def test_projects_of_one_agent_are_kept_apart(tmp_path: Path) -> None:
    with _app(tmp_path) as app:
        for project, word in (("p", "kites"), ("q", "zebras")):
            app.remember_many(
                [{"content": f"{word} note {n}", "source_id": "same-id", "project": project}
                 for n in range(2)]
            )
        conn = app.store.reader()
        assert [h.key for h in sources.search(conn, "zebras", None, 10, project="q")] == [
            ("default", "q", "same-id")
        ]
        assert sources.search(conn, "zebras", None, 10, project="p") == []
        assert sources.search(conn, "kites zebras", "default", 10, project="p")[0].project == "p"


def test_presence_checks_probe_partial_indexes(tmp_path: Path) -> None:
    """Recall skips the hint and whole-source channels when they hold nothing; the checks are
    index probes (migration 008), not scans of the memories."""
    with _app(tmp_path) as app:
        conn = app.store.reader()
        for sql in ("SELECT 1 FROM memories WHERE hints <> '' LIMIT 1",
                    "SELECT 1 FROM memory_sources WHERE members >= 2 LIMIT 1"):
            plan = " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
        assert not sources.any_ranked(conn)
        app.remember_many([{"content": f"part {n}", "source_id": "doc"} for n in range(2)])
        assert sources.any_ranked(app.store.reader())
