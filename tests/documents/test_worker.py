"""The document worker on a real store: the status walk, each step its own transaction with no
embedding inside one, chunks as document_chunk memories of the document, dedup by hash, a
changed file replacing its chunks (history kept), delete forgetting them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from signet.app import SignetApp
from signet.config import Config, PipelineConfig
from signet.errors import Forbidden, InvalidInput, NotFound
from signet.providers.hash_embedder import HashEmbedder
from signet.types import MemoryScope, RecallQuery
from write_paths import inline

PARAS = [f"Section {i}. The ledger entry {i} records payment number {i} to vendor V{i}."
         for i in range(12)]


class ProbeEmbedder(HashEmbedder):
    """A real (hash) embedder that notes, at each call, whether a write transaction is open
    and what status the documents have, read through a separate connection."""

    def __init__(self) -> None:
        super().__init__(64)
        self.store = None
        self.seen: list[tuple[bool, list[str]]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.store is not None:
            with sqlite3.connect(self.store.path) as conn:
                statuses = [r[0] for r in conn.execute("SELECT status FROM documents")]
            self.seen.append((self.store.in_write_tx, statuses))
        return super().embed(texts)


@pytest.fixture
def probe() -> ProbeEmbedder:
    return ProbeEmbedder()


@pytest.fixture
def app(tmp_path: Path, probe: ProbeEmbedder) -> Iterator[SignetApp]:
    cfg = inline(Config.default(tmp_path / "ws")).replace(
        pipeline=PipelineConfig(enabled=False, document_chunk_size=200, document_chunk_overlap=40))
    opened = SignetApp.open(cfg, embedder=probe, llm=None)
    probe.store = opened.store
    yield opened
    opened.close()


def _drain(app: SignetApp) -> None:
    app.run_pipeline_until_idle(only=["documents"])


def test_text_becomes_chunks_of_the_document_with_each_step_its_own_transaction(
    app: SignetApp, probe: ProbeEmbedder
) -> None:
    registered = app.documents.ingest_text("\n\n".join(PARAS), title="Ledger")
    assert registered.outcome == "queued" and registered.document.status == "queued"
    probe.seen.clear()
    _drain(app)
    doc = app.documents.get(registered.document.id)
    assert doc["status"] == "done" and doc["error"] is None and doc["completed_at"]
    # The embedding ran with no transaction open, while the document said "embedding".
    assert probe.seen == [(False, ["embedding"])]
    chunks = [app.get(c["memory_id"]) for c in doc["chunks"]]
    assert len(chunks) == doc["chunk_count"] == doc["memory_count"] > 3
    assert [c["chunk_index"] for c in doc["chunks"]] == list(range(len(chunks)))
    for chunk in chunks:
        assert (chunk.type, chunk.importance, chunk.source_id, chunk.source_type) == (
            "document_chunk", 0.3, doc["id"], "document")
        assert len(chunk.content) <= 200
    hits = app.recall(RecallQuery("payment number 7 vendor V7", limit=3)).hits
    assert hits and hits[0].memory.source_id == doc["id"] and "V7" in hits[0].memory.content


def test_the_same_text_again_is_unchanged_and_writes_nothing(app: SignetApp) -> None:
    first = app.documents.ingest_text("\n\n".join(PARAS))
    _drain(app)
    again = app.documents.ingest_text("\n\n".join(PARAS))
    assert again.outcome == "unchanged" and again.document.id == first.document.id
    assert app.jobs(job_type="document_ingest", status="pending") == []


def test_a_changed_file_replaces_its_chunks_and_keeps_history(app: SignetApp, tmp_path: Path) -> None:
    note = tmp_path / "notes.md"
    note.write_text("# Notes\n\n" + "\n\n".join(PARAS))
    doc_id = app.documents.ingest_file(note).document.id
    _drain(app)
    before = {c["memory_id"]: app.get(c["memory_id"]).content
              for c in app.documents.get(doc_id)["chunks"]}
    assert app.documents.ingest_file(note).outcome == "unchanged"
    note.write_text("# Notes\n\n" + "\n\n".join(PARAS[:6] + ["Section 99. A brand new entry."]))
    assert app.documents.ingest_file(note).outcome == "requeued"
    _drain(app)
    doc = app.documents.get(doc_id)
    assert doc["status"] == "done" and doc["title"] == "Notes"
    after = {c["memory_id"] for c in doc["chunks"]}
    kept, dropped = set(before) & after, set(before) - after
    assert kept and dropped  # unchanged chunks stay (not re-written), the rest are replaced
    for memory_id in dropped:
        memory = app.get(memory_id)
        assert memory.is_deleted
        assert [h.event for h in app.history(memory_id)] == ["created", "deleted"]
    assert any("brand new entry" in app.get(m).content for m in after)


def test_delete_forgets_the_chunks_and_removes_the_document(app: SignetApp) -> None:
    doc_id = app.documents.ingest_text("\n\n".join(PARAS)).document.id
    _drain(app)
    chunk_ids = [c["memory_id"] for c in app.documents.get(doc_id)["chunks"]]
    assert app.documents.delete(doc_id)["forgotten"] == len(chunk_ids)
    assert all(app.get(m).is_deleted for m in chunk_ids)
    with pytest.raises(Exception, match="not found"):
        app.documents.get(doc_id)


def test_bad_documents_fail_at_once_naming_the_problem(app: SignetApp, tmp_path: Path) -> None:
    odd = tmp_path / "data.bin.txt"
    odd.write_bytes(b"\xff\xfe\xfa")
    doc_id = app.documents.ingest_file(odd).document.id
    _drain(app)
    doc = app.documents.get(doc_id)
    assert doc["status"] == "failed" and "not UTF-8" in doc["error"] and doc["chunks"] == []
    assert [j.status for j in app.jobs(job_type="document_ingest")] == ["completed"]
    with pytest.raises(NotFound, match="no such file"):
        app.documents.ingest_file(tmp_path / "missing.md")
    with pytest.raises(InvalidInput, match="non-empty"):
        app.documents.ingest_text("   ")
    with pytest.raises(Forbidden, match="url_fetch_enabled"):
        app.documents.ingest_url("https://example.com/")


def test_scoped_callers_register_into_their_slice_and_see_only_it(app: SignetApp, tmp_path: Path) -> None:
    mine = MemoryScope(project="p")
    doc_id = app.documents.ingest_text("\n\n".join(PARAS[:3]), scope=mine).document.id
    _drain(app)
    assert app.documents.get(doc_id, mine)["project"] == "p"
    chunk = app.get(app.documents.get(doc_id)["chunks"][0]["memory_id"])
    assert chunk.project == "p"
    other = MemoryScope(project="q")
    assert app.documents.list(other)["items"] == []
    with pytest.raises(Exception, match="not found"):
        app.documents.get(doc_id, other)
    with pytest.raises(Exception, match="not found"):
        app.documents.delete(doc_id, scope=other)
    note = tmp_path / "n.md"
    note.write_text("text")
    with pytest.raises(Forbidden, match="local files"):
        app.documents.ingest_file(note, scope=mine)
