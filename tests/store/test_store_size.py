"""What keeps the database small (issue 16): 16 KiB pages for a new store, no index that is only
the leading part of another, and migrations that rebuild tables losing nothing.

Each migration is tested on a store built at the schema before it, holding data, and opened by
the current code: counts and content before and after."""

from __future__ import annotations

from pathlib import Path

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
        counts = graph_corpus.write_graph(app.store, graph, ids)
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
