"""A full reload of the vector index (a vector replaced or removed by another connection) is
built aside and swapped in whole: a search running meanwhile, in a thread whose sync found
nothing to do, sees the old index entire, never a half-loaded one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from signet.recall.vectors import IndexKind, VectorSearch
from signet.store import embeddings as emb_sql
from signet.store.db import Store

DIMENSIONS = 8
NOW = "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize("kind", ["quantized", "exact"])
def test_a_search_during_a_full_reload_sees_the_old_index_whole(tmp_path: Path, kind: IndexKind) -> None:
    store = Store.open(tmp_path / "memories.db")
    rng = np.random.default_rng(7)
    try:
        with store.write_tx() as conn:
            for i in range(20):
                vector = rng.standard_normal(DIMENSIONS).astype(np.float32)
                emb_sql.upsert(conn, f"hash-{i}", vector, model="m", now=NOW)
        vectors = VectorSearch("m", DIMENSIONS, kind)
        reader = store.reader()
        vectors.sync(reader)
        assert len(vectors) == 20
        with store.write_tx() as conn:
            emb_sql.delete_for_hashes(conn, ["hash-3"])  # not an append: a full reload
        sizes_while_loading: list[int] = []

        def watch(statement: str) -> None:
            if statement.startswith("SELECT id, vector FROM embeddings"):
                sizes_while_loading.append(len(vectors))  # what another thread would search

        reader.set_trace_callback(watch)
        vectors.sync(reader)
        reader.set_trace_callback(None)
        assert sizes_while_loading and set(sizes_while_loading) == {20}
        assert len(vectors) == 19
    finally:
        store.close()
