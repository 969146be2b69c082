"""Export and import through the portable store protocol on both backends, across them:
a bundle exported from SQLite or PostgreSQL imports into either, keeping ids, hashes, history,
deletions, vectors and the link from a superseded memory to its replacement; a re-import adds nothing; content the target holds is deduped; what the
target's schema has no place for is named (`left_behind`, `columns_left_behind`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signet.app import SignetApp
from signet.config import Config, PipelineConfig, StoreConfig
from signet.portable.bundle import export_bundle, import_bundle
from signet.providers.hash_embedder import HashEmbedder
from signet.types import MemoryFilters, RecallQuery
from write_paths import inline

BACKENDS = ["sqlite", "postgres"]
TEXTS = [f"{who} keeps the {what} notes in room {i}" for i, (who, what) in enumerate(
    (w, t) for w in ("Ava", "Ben", "Chloe", "Dev") for t in ("billing", "garden", "jazz", "rust"))]


def _open(root: Path, url: str | None) -> SignetApp:
    cfg = inline(Config.default(root)).replace(pipeline=PipelineConfig(enabled=False))
    if url is not None:
        cfg = cfg.replace(store=StoreConfig(backend="postgres", url=url))
    return SignetApp.open(cfg, embedder=HashEmbedder(64), llm=None)


def _memories(app: SignetApp) -> list[tuple[Any, ...]]:
    page = app.list(MemoryFilters(include_deleted=True), limit=1000)
    return sorted((m.id, m.content_hash, m.content, m.is_deleted, m.version, m.tags,
                   m.superseded_by) for m in page.items)


def _supersede(app: SignetApp, old: str, new: str) -> None:
    """Link `old` to its replacement the way the extraction worker does."""
    with app.backend.pipeline().write() as tx:
        tx.update_columns(old, {"superseded_by": new}, "2026-01-02T00:00:00Z")


def _vector_hits(app: SignetApp) -> list[list[str]]:
    return [[h.memory.id for h in app.recall(RecallQuery(q, mode="vector", touch=False)).hits]
            for q in ("billing notes", "who plays jazz", "rust room")]


@pytest.mark.parametrize("source_backend", BACKENDS)
@pytest.mark.parametrize("target_backend", BACKENDS)
def test_a_bundle_moves_between_backends_whole(
    tmp_path: Path, pg_url: str, pg_url_other: str, source_backend: str, target_backend: str
) -> None:
    source = _open(tmp_path / "a", pg_url if source_backend == "postgres" else None)
    target = _open(tmp_path / "b", pg_url_other if target_backend == "postgres" else None)
    try:
        ids = [source.remember(t, tags=["team"] if i % 3 else []).id
               for i, t in enumerate(TEXTS)]
        source.modify(ids[0], {"content": "Ava moved the billing notes to room 99"})
        source.forget(ids[1])
        _supersede(source, ids[2], ids[6])
        if source_backend == "sqlite":  # a table PostgreSQL may not hold yet
            source.remember("Gina runs the orchard", graph={"entities": [{"name": "Gina"}]})
        held = target.remember(TEXTS[5]).id  # the target holds this content already

        manifest = export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
        assert manifest["backend"] == source_backend
        report = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")

        assert report["backend"] == target_backend and report["deduped_memories"] == 1
        expected = [m for m in _memories(source) if m[0] != ids[5]]
        assert [m for m in _memories(target) if m[0] != held] == expected
        assert target.get(ids[1]).is_deleted and target.get(held).content == TEXTS[5]
        assert target.get(ids[2]).superseded_by == ids[6]
        assert [e.event for e in target.history(ids[0])] == ["created", "updated"]
        assert _vector_hits(target) == _vector_hits(source)  # the vectors came along
        # Every table of the bundle with rows went in, or is named with its rows.
        for table, rows in manifest["tables"].items():
            if rows:
                assert table in report["inserted"] or report["left_behind"][table] == rows
        if (source_backend, target_backend) == ("sqlite", "postgres"):
            assert "chunk_text" in report["columns_left_behind"]["embeddings"]
        again = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        assert sum(again["inserted"].values()) == 0
        # A memory written after the import gets an id and a vector of its own.
        later = target.remember("Hugo waters the orchard plants").id
        hits = target.recall(RecallQuery("Hugo waters the orchard", mode="vector")).hits
        assert hits[0].memory.id == later
    finally:
        source.close()
        target.close()
