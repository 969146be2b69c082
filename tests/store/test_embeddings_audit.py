"""The embeddings audit counts from indexes only: at 100k vectors reading the table's rows
(each beside its vector) was most of a maintenance run."""

from __future__ import annotations

from pathlib import Path

from signet.store import embeddings as emb_sql
from signet.store.db import Store


def test_the_audit_reads_indexes_not_the_vectors(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "memories.db")
    try:
        conn = store.reader()
        plan = " ".join(str(row[-1]) for row in conn.execute(
            "EXPLAIN QUERY PLAN " + emb_sql.AUDIT_CURRENT, ("some-model",)))
        assert "COVERING INDEX idx_embeddings_model_stale_hash" in plan, plan
        plan = " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + emb_sql.AUDIT_LIVE))
        assert "COVERING INDEX idx_memories_scope_content_hash" in plan and "TEMP" not in plan, plan
        audit = emb_sql.audit(conn, "some-model")
        assert audit == {"memories": 0, "embedded": 0, "missing": 0, "stale": 0, "vectors": 0}
    finally:
        store.close()


def test_a_load_step_walks_the_table_by_id(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "memories.db")
    try:
        conn = store.reader()
        plan = " ".join(str(row[-1]) for row in conn.execute(
            "EXPLAIN QUERY PLAN " + emb_sql.LOAD_SINCE, (0, "some-model", 384, 50_000)))
        assert "INTEGER PRIMARY KEY" in plan and "TEMP" not in plan, plan
    finally:
        store.close()
