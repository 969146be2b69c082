"""What keeps the database small (issue 16): 16 KiB pages for a new store, no index that is only
the leading part of another, and migrations that rebuild tables losing nothing.

Each migration is tested on a store built at the schema before it, holding data, and opened by
the current code: counts and content before and after."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.bench import graph_corpus
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.store import migrate
from signet.store.connection import Connection, connect
from signet.store.db import Store

REDUNDANT = {
    "idx_entity_dependencies_source", "idx_entity_dependencies_target",
    "idx_entity_attributes_aspect_id", "idx_memories_agent_id", "idx_entities_canonical_name",
}


def _indexes(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def _plan(conn: Connection, sql: str, *args: object) -> str:
    return " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))


def _old_store(path: Path, below: int) -> None:
    """A database migrated only up to (not including) migration `below`, at 4 KiB pages as
    every store before this change was."""
    import sqlean

    path.parent.mkdir(parents=True, exist_ok=True)
    raw = sqlean.connect(str(path), isolation_level=None)
    raw.execute("PRAGMA page_size = 4096")
    raw.execute("PRAGMA journal_mode = WAL")
    migrate.migrate(raw, [m for m in migrate.bundled_migrations() if m.version < below])
    raw.close()


def test_a_new_store_has_16k_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "new.db")
    assert store.reader().execute("PRAGMA page_size").fetchone()[0] == 16384
    store.close()
    _old_store(tmp_path / "old.db", below=50)
    store = Store.open(tmp_path / "old.db")
    assert store.reader().execute("PRAGMA page_size").fetchone()[0] == 4096
    assert store.reader().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.close()


def test_050_drops_the_redundant_indexes_and_the_graph_walk_keeps_its_seek(
    tmp_path: Path,
) -> None:
    _old_store(tmp_path / "memory" / "memories.db", below=50)
    conn = connect(tmp_path / "memory" / "memories.db")
    assert REDUNDANT <= _indexes(conn)
    conn.close()
    config = Config.default(tmp_path)
    with SignetApp.open(config, embedder=HashEmbedder(64)) as app:
        graph = graph_corpus.plan_graph(60, 12)
        ids = [app.remember(f"note {i} about the build" + graph.suffix(i)).id for i in range(60)]
        counts = graph_corpus.write_graph(app.graph.store, graph, ids)
        conn = app.store.reader()
        assert not REDUNDANT & _indexes(conn)
        assert conn.execute("SELECT count(*) FROM entity_dependencies").fetchone()[0] == (
            counts["dependencies"]
        )
        source = conn.execute("SELECT source_entity_id FROM entity_dependencies").fetchone()[0]
        # Every lookup the dropped indexes served seeks the wider index on the same columns.
        assert "(source_entity_id=?)" in _plan(
            conn, "SELECT id FROM entity_dependencies WHERE source_entity_id = ?", source)
        assert "idx_entity_dependencies_target_rank (target_entity_id=?)" in _plan(
            conn, "SELECT id FROM entity_dependencies WHERE target_entity_id = ?", source)
        assert "idx_entity_attributes_aspect_rank (aspect_id=?)" in _plan(
            conn, "SELECT id FROM entity_attributes WHERE aspect_id = ?", "a")
        assert "idx_memories_agent_session (agent_id=?)" in _plan(
            conn, "SELECT id FROM memories WHERE agent_id = ?", "default")
        assert "(canonical_name=?)" in _plan(
            conn, "SELECT id FROM entities WHERE canonical_name = ?", "x")


def _mentions(conn: Connection) -> list[tuple[object, ...]]:
    return [tuple(r) for r in conn.execute(
        "SELECT memory_id, entity_id, mention_text, confidence, created_at"
        " FROM memory_entity_mentions ORDER BY memory_id, entity_id")]


def _old_mentions(path: Path) -> None:
    """Memories, entities and their mentions written in the layout before 051 (plain SQL:
    today's code would migrate the store first)."""
    conn = connect(path)
    now = "2026-12-01T12:00:00.000Z"
    for i in range(60):
        conn.execute(
            "INSERT INTO memories (id, content, content_hash, created_at, updated_at)"
            " VALUES (?,?,?,?,?)", (f"m{i:03d}", f"note {i} on the release", f"h{i}", now, now))
    for e in range(12):
        conn.execute(
            "INSERT INTO entities (id, name, canonical_name, created_at, updated_at)"
            " VALUES (?,?,?,?,?)", (f"e{e:02d}", f"Entity {e}", f"entity {e}", now, now))
    for i in range(60):
        for e in {i % 12, (i * 7) % 12}:
            conn.execute(
                "INSERT INTO memory_entity_mentions (memory_id, entity_id, mention_text,"
                " confidence, created_at) VALUES (?,?,?,?,?)",
                (f"m{i:03d}", f"e{e:02d}", f"Entity {e}", 0.5 + e / 100, now))
    conn.close()


def test_051_rebuilds_the_mentions_without_rowid_losing_none(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "memories.db"
    _old_store(path, below=51)
    _old_mentions(path)
    conn = connect(path)
    before = _mentions(conn)
    assert len(before) > 60
    assert "WITHOUT ROWID" not in _table_sql(conn, "memory_entity_mentions")
    # A migration that fails half way (a kill -9 mid-rebuild is the same: no COMMIT) leaves
    # the old table whole.
    held = [m for m in migrate.bundled_migrations() if m.version < 51]
    [m051] = [m for m in migrate.bundled_migrations() if m.version == 51]
    broken = migrate.Migration(51, m051.name, m051.sql + "\nSELECT no_such_function();\n")
    with pytest.raises(Exception, match="no_such_function"):
        migrate.migrate(conn, [*held, broken])
    assert _mentions(conn) == before
    assert "WITHOUT ROWID" not in _table_sql(conn, "memory_entity_mentions")
    conn.close()
    with SignetApp.open(Config.default(tmp_path), embedder=HashEmbedder(64)) as app:
        conn = app.store.reader()
        assert "WITHOUT ROWID" in _table_sql(conn, "memory_entity_mentions")
        assert _mentions(conn) == before
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert "COVERING INDEX idx_memory_entity_mentions_entity_id" in _plan(
            conn, "SELECT DISTINCT memory_id FROM memory_entity_mentions WHERE entity_id = ?", "e")
        # Deleting a memory still removes its mentions (ON DELETE CASCADE kept), and new
        # mentions are written through today's code.
        with app.store.write_tx() as tx:
            tx.execute("DELETE FROM memories WHERE id = 'm000'")
        assert all(row[0] != "m000" for row in _mentions(conn))
        assert len(_mentions(conn)) == len(before) - sum(r[0] == "m000" for r in before)


def _table_sql(conn: Connection, name: str) -> str:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return str(row[0])


def test_maintenance_deletes_orphan_mentions_by_key(tmp_path: Path) -> None:
    """The orphan cleanup named mentions by rowid; the table has none after 051."""
    config = Config.default(tmp_path)
    with SignetApp.open(config, embedder=HashEmbedder(64)) as app:
        kept = app.remember("Ada ships the release").id
        conn = connect(config.db_path)
        conn.execute("PRAGMA foreign_keys = OFF")  # as an import with checks off could leave
        conn.execute(
            "INSERT INTO entities (id, name, canonical_name, created_at, updated_at)"
            " VALUES ('e1', 'Ada', 'ada', '2026-01-01', '2026-01-01')")
        for memory_id in (kept, "gone-1", "gone-2"):
            conn.execute(
                "INSERT INTO memory_entity_mentions (memory_id, entity_id, created_at)"
                " VALUES (?, 'e1', '2026-01-01')", (memory_id,))
        conn.close()
        report = app.run_maintenance(execute=True)
        [action] = [a for a in report["actions"] if a["action"] == "delete_orphan_mentions"]
        assert action["changed"]["deleted"] == 2
        assert [r[0] for r in _mentions(app.store.reader())] == [kept]
