"""The initial schema file, applied by hand to a fresh database.

These tests read 001_initial.sql straight from the package and run it with
executescript, as the migration runner does, so they pin down the SQL itself:
every table and index exists, re-running is harmless, the FTS triggers keep
memories_fts in step with memories, and the dedup index only guards live rows.
"""

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
import sqlean as sqlite3

MIGRATIONS = files("signet.store") / "migrations"
NOW = "2026-11-29T12:00:00.000Z"

TABLES = {
    "memories", "memories_fts", "memories_cold", "embeddings", "memory_jobs",
    "memory_history", "entities", "entity_aliases", "entity_communities", "relations",
    "memory_entity_mentions", "documents", "document_memories", "connectors",
    "summary_jobs", "memory_artifacts", "memory_artifact_tombstones",
    "session_transcripts", "umap_cache", "skill_meta", "entity_aspects",
    "predictor_comparisons", "entity_attributes", "entity_dependencies",
    "predictor_training_pairs", "agent_feedback", "task_meta", "entity_pinning",
    "conversations", "tokens", "idempotency_keys",
}

INDEXES = {
    "idx_memories_content_hash_unique", "idx_memories_deleted_created", "idx_memories_type",
    "idx_memories_project", "idx_memories_agent_id", "idx_memories_source_id",
    "idx_memories_pinned", "idx_memories_cold_memory_id", "idx_memories_cold_archived_at",
    "idx_embeddings_model_stale", "idx_memory_jobs_status", "idx_memory_jobs_memory_id",
    "idx_memory_jobs_claim", "idx_memory_jobs_completed_at", "idx_memory_jobs_dead_failed_at",
    "idx_memory_history_memory_created", "idx_memory_history_created_at",
    "idx_entities_canonical_name", "idx_entity_aliases_canonical_alias",
    "idx_relations_source", "idx_relations_target", "idx_relations_source_type",
    "idx_memory_entity_mentions_entity_id", "idx_documents_status",
    "idx_documents_source_url", "idx_documents_connector_id", "idx_documents_content_hash",
    "idx_connectors_provider", "idx_conversations_session_id", "idx_conversations_harness",
    "idx_session_transcripts_project", "idx_session_transcripts_created_at",
    "idx_entity_dependencies_source", "idx_entity_dependencies_target",
    "idx_entity_attributes_aspect_id", "idx_entity_attributes_entity_id",
    "idx_agent_feedback_memory_id",
}

TRIGGERS = {"memories_ai", "memories_ad", "memories_au"}


def _sql(name: str) -> str:
    return (MIGRATIONS / name).read_text(encoding="utf-8")


def _names(conn: sqlite3.Connection, kind: str) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))
    return {name for (name,) in rows}


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(tmp_path / "signet.db")
    db.execute("PRAGMA foreign_keys = ON")
    db.executescript(_sql("001_initial.sql"))
    yield db
    db.close()


def _add_memory(
    conn: sqlite3.Connection, mid: str, content: str, content_hash: str | None = None,
    hints: str = "", tags: str = "[]",
) -> None:
    conn.execute(
        "INSERT INTO memories (id, content, content_hash, hints, tags, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (mid, content, content_hash, hints, tags, NOW, NOW),
    )


def _fts_ids(conn: sqlite3.Connection, query: str) -> list[str]:
    rows = conn.execute(
        "SELECT m.id FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid"
        " WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts)",
        (query,),
    )
    return [mid for (mid,) in rows]


def _fts_consistent(conn: sqlite3.Connection) -> None:
    # Raises if the external-content index disagrees with the memories table.
    conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")


def test_every_table_index_and_trigger_exists(conn: sqlite3.Connection) -> None:
    assert TABLES <= _names(conn, "table")
    assert INDEXES <= _names(conn, "index")
    assert TRIGGERS <= _names(conn, "trigger")


def test_applying_twice_changes_nothing(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea", "h1")
    conn.commit()
    before = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.executescript(_sql("001_initial.sql"))
    after = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    assert before == after
    assert _fts_ids(conn, "oolong") == ["m1"]


def test_telemetry_table_is_only_created_by_its_optional_file(
    conn: sqlite3.Connection,
) -> None:
    assert "memory_search_telemetry" not in _names(conn, "table")
    conn.executescript(_sql("optional_search_telemetry.sql"))
    conn.executescript(_sql("optional_search_telemetry.sql"))
    assert "memory_search_telemetry" in _names(conn, "table")
    assert {
        "idx_memory_search_telemetry_created_at",
        "idx_memory_search_telemetry_agent_id",
        "idx_memory_search_telemetry_project",
    } <= _names(conn, "index")


def test_fts_finds_inserted_content_hints_and_tags(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea", hints="what beverage", tags='["drinks"]')
    _add_memory(conn, "m2", "the deploy target is fly.io")
    assert _fts_ids(conn, "oolong") == ["m1"]
    assert _fts_ids(conn, "hints:beverage") == ["m1"]
    assert _fts_ids(conn, "tags:drinks") == ["m1"]
    assert _fts_ids(conn, "deploy") == ["m2"]
    _fts_consistent(conn)


def test_fts_follows_an_update_of_content(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea")
    conn.execute("UPDATE memories SET content = 'the user drinks espresso' WHERE id = 'm1'")
    assert _fts_ids(conn, "oolong") == []
    assert _fts_ids(conn, "espresso") == ["m1"]
    conn.execute("UPDATE memories SET hints = 'morning coffee' WHERE id = 'm1'")
    assert _fts_ids(conn, "coffee") == ["m1"]
    _fts_consistent(conn)


def test_fts_forgets_a_deleted_row(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea", hints="beverage")
    conn.execute("DELETE FROM memories WHERE id = 'm1'")
    assert _fts_ids(conn, "oolong") == []
    assert _fts_ids(conn, "beverage") == []
    _fts_consistent(conn)


def test_updates_outside_text_columns_keep_fts_intact(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea")
    conn.execute("UPDATE memories SET access_count = access_count + 1, pinned = 1")
    assert _fts_ids(conn, "oolong") == ["m1"]
    _fts_consistent(conn)


def test_second_live_row_with_same_hash_is_rejected(conn: sqlite3.Connection) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea", "h1")
    with pytest.raises(sqlite3.IntegrityError):
        _add_memory(conn, "m2", "The user drinks oolong tea.", "h1")


def test_same_hash_is_allowed_once_the_first_is_soft_deleted(
    conn: sqlite3.Connection,
) -> None:
    _add_memory(conn, "m1", "the user drinks oolong tea", "h1")
    conn.execute("UPDATE memories SET is_deleted = 1, deleted_at = ? WHERE id = 'm1'", (NOW,))
    _add_memory(conn, "m2", "the user drinks oolong tea", "h1")
    _add_memory(conn, "m3", "no hash yet")
    _add_memory(conn, "m4", "no hash either")
    live = conn.execute("SELECT id FROM memories WHERE content_hash = 'h1' AND is_deleted = 0")
    assert [mid for (mid,) in live] == ["m2"]


def test_check_constraints_reject_unknown_states(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memory_jobs (id, job_type, status, created_at, updated_at)"
            " VALUES ('j1', 'extract', 'running', ?, ?)",
            (NOW, NOW),
        )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories (id, content, extraction_status, created_at, updated_at)"
            " VALUES ('m1', 'x', 'busy', ?, ?)",
            (NOW, NOW),
        )


def test_deleting_an_entity_cascades_to_its_edges(conn: sqlite3.Connection) -> None:
    for eid in ("e1", "e2"):
        conn.execute(
            "INSERT INTO entities (id, name, canonical_name, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (eid, eid.upper(), eid, NOW, NOW),
        )
    conn.execute(
        "INSERT INTO relations (id, source_entity_id, target_entity_id, relation_type,"
        " created_at, updated_at) VALUES ('r1', 'e1', 'e2', 'uses', ?, ?)",
        (NOW, NOW),
    )
    _add_memory(conn, "m1", "E1 uses E2")
    conn.execute(
        "INSERT INTO memory_entity_mentions (memory_id, entity_id, created_at)"
        " VALUES ('m1', 'e2', ?)",
        (NOW,),
    )
    conn.execute("DELETE FROM entities WHERE id = 'e2'")
    assert conn.execute("SELECT count(*) FROM relations").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM memory_entity_mentions").fetchone() == (0,)
