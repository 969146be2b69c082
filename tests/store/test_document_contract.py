"""The documents' store contract (store/document_store.py), one suite on both backends: the
SQLite store and a real PostgreSQL server (tests/pg_server.py). The DocumentStore under test is
the one the app builds (`app.documents.docs`), with its memory service writing the chunks;
`second` is another app on the same store, as a second daemon would hold it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.store.backend import CoreStore
from signet.store.document_store import DocumentStore
from signet.store.documents import NewDocument
from signet.store.jobs import LostLease
from signet.types import Actor, MemoryScope, RecallQuery

T0 = "2026-11-29T12:00:00.000Z"
T1 = "2026-11-29T12:00:01.000Z"
LATER = "2026-11-29T13:00:00.000Z"
ACTOR = Actor(name="documents", type="daemon", agent_id="a")


@pytest.fixture
def opener(config: Config, backend_store: StoreConfig) -> Iterator[Callable[[], SignetApp]]:
    cfg = config.replace(store=backend_store)
    opened: list[SignetApp] = []

    def open_one() -> SignetApp:
        opened.append(SignetApp.open(cfg, embedder=HashEmbedder(32), llm=None))
        return opened[-1]

    yield open_one
    for app in opened:
        app.close()


@pytest.fixture
def app(opener: Callable[[], SignetApp]) -> SignetApp:
    return opener()


def docs_of(app: SignetApp) -> DocumentStore:
    return app.documents.docs


def core_of(app: SignetApp) -> CoreStore:
    """The app's store seam (jobs): the PostgreSQL app's own, the SQLite store's wrapped."""
    return app.backend.core


def text(key: str, *, digest: str | None = "d1", project: str | None = "p",
         agent: str = "a", connector: str | None = None) -> NewDocument:
    return NewDocument(source_type="text", source_key=key, source_url=None, digest=digest,
                       title="T", raw_content=f"raw {key}", agent_id=agent, project=project,
                       connector_id=connector)


def index(app: SignetApp, doc_id: str, contents: list[str], now: str = T1) -> dict[str, int]:
    """What the worker does: lease the job, prepare the chunks, write the chunk set."""
    docs = docs_of(app)
    job = docs.lease(now)
    assert job is not None and job.document_id == doc_id
    document = docs.get(doc_id)
    assert document is not None
    held = {h: m for m, _i, h in docs.chunk_links(doc_id) if h}
    hashes = [app.memory.prepare_memories([{"content": c}], actor=ACTOR)[0].norm.content_hash
              for c in contents]
    todo = [i for i, h in enumerate(hashes) if h not in held]
    prepared = app.memory.prepare_memories(
        [{"content": contents[i], "type": "document_chunk", "source_id": doc_id,
          "source_type": "document", "project": document.project} for i in todo],
        actor=ACTOR, prefixes=False)
    return docs.index(job, document, digest="x" + str(len(contents)), hashes=hashes,
                      new=dict(zip(todo, prepared, strict=True)), held=held, actor=ACTOR, now=now)


def test_register_finds_the_source_in_its_slice(app: SignetApp) -> None:
    docs = docs_of(app)
    first, outcome = docs.register(text("k"), now=T0, max_attempts=3)
    assert outcome == "queued" and first.status == "queued" and first.project == "p"
    assert first.metadata == {"source_sha256": "d1"} and docs.raw_content(first.id) == "raw k"
    again, outcome = docs.register(text("k", digest="d2"), now=T1, max_attempts=3)
    assert (again.id, outcome, again.status) == (first.id, "requeued", "queued")
    other, outcome = docs.register(text("k", project=None), now=T1, max_attempts=3)
    assert outcome == "queued" and other.id != first.id  # another slice, another document
    assert docs.lease(T1) is not None and docs.lease(T1) is not None
    assert docs.lease(T1) is None  # one live job per document, however often registered


def test_an_indexed_source_registered_again_is_unchanged(app: SignetApp) -> None:
    docs = docs_of(app)
    doc, _ = docs.register(text("k"), now=T0, max_attempts=3)
    result = index(app, doc.id, ["Pears ripen in autumn.", "Apples keep in the cellar."])
    assert result == {"chunks": 2, "new": 2, "kept": 0, "forgotten": 0}
    done = docs.get(doc.id)
    assert done is not None and done.status == "done" and done.memory_count == 2
    again, outcome = docs.register(text("k"), now=T1, max_attempts=3)
    assert outcome == "unchanged" and again.id == doc.id and docs.lease(T1) is None


def test_a_new_chunk_set_keeps_the_same_chunks_and_forgets_the_rest(app: SignetApp) -> None:
    docs = docs_of(app)
    doc, _ = docs.register(text("k"), now=T0, max_attempts=3)
    index(app, doc.id, ["Pears ripen in autumn.", "Apples keep in the cellar."])
    links = docs.chunk_links(doc.id)
    pears, apples = links[0][0], links[1][0]
    assert [i for _m, i, _h in links] == [0, 1]
    chunk = app.get(pears)
    assert (chunk.type, chunk.source_id, chunk.agent_id, chunk.project) == (
        "document_chunk", doc.id, "a", "p")
    docs.register(text("k", digest="d2"), now=T1, max_attempts=3)
    result = index(app, doc.id, ["Plums dry into prunes.", "Pears ripen in autumn."], now=LATER)
    assert result == {"chunks": 2, "new": 1, "kept": 1, "forgotten": 1}
    links = docs.chunk_links(doc.id)
    assert [m for m, _i, _h in links][1] == pears and len(links) == 2
    assert app.get(apples).is_deleted and not app.get(pears).is_deleted
    assert sorted(e.event for e in app.history(apples)) == ["created", "deleted"]


def test_reads_and_delete_keep_to_the_scope(app: SignetApp) -> None:
    docs = docs_of(app)
    doc, _ = docs.register(text("k"), now=T0, max_attempts=3)
    docs.register(text("j", project="q"), now=T1, max_attempts=3)
    index(app, doc.id, ["Pears ripen in autumn.", "Apples keep in the cellar."])
    mine, theirs = MemoryScope(project="p"), MemoryScope(project="q")
    assert docs.get(doc.id, theirs) is None and docs.get(doc.id, mine) is not None
    page, total = docs.list_page(theirs, status=None, connector_id=None, limit=10, offset=0)
    assert total == 1 and [d.project for d in page] == ["q"]
    page, total = docs.list_page(None, status="done", connector_id=None, limit=10, offset=0)
    assert (total, [d.id for d in page]) == (1, [doc.id])
    newest, total = docs.list_page(None, status=None, connector_id=None, limit=1, offset=0)
    assert total == 2 and newest[0].project == "q"
    assert docs.delete(doc.id, actor=ACTOR, now=LATER, scope=theirs) is None
    chunks = [m for m, _i, _h in docs.chunk_links(doc.id)]
    assert docs.delete(doc.id, actor=ACTOR, now=LATER, scope=mine) == 2
    assert docs.get(doc.id) is None and docs.delete(doc.id, actor=ACTOR, now=LATER) is None
    assert all(app.get(m).is_deleted for m in chunks)


def test_a_job_is_leased_once_across_daemons_and_a_lost_lease_writes_nothing(
    opener: Callable[[], SignetApp],
) -> None:
    one, two = opener(), opener()
    doc, _ = docs_of(one).register(text("k"), now=T0, max_attempts=3)
    job = docs_of(one).lease(T0)
    assert job is not None and docs_of(two).lease(T0) is None
    docs_of(one).step(job, doc.id, "extracting", T0)
    assert docs_of(two).get(doc.id).status == "extracting"  # type: ignore[union-attr]
    assert core_of(two).reap_stale_leases(LATER, 1000) == 1  # the first daemon hung
    retaken = docs_of(two).lease(LATER)
    assert retaken is not None and retaken.id == job.id
    with pytest.raises(LostLease):
        docs_of(one).step(job, doc.id, "chunking", LATER)
    docs_of(one).fail(job, doc.id, "late", LATER, final=True)  # not ours: nothing happens
    assert docs_of(one).fail_job(job, "late", LATER, retry_delay_ms=0) == ""
    assert docs_of(two).get(doc.id).status == "extracting"  # type: ignore[union-attr]
    docs_of(two).finish(retaken, doc.id, LATER, {"unchanged": True})
    assert docs_of(one).get(doc.id).status == "done"  # type: ignore[union-attr]


def test_failing_a_job_retries_then_a_final_failure_completes_it(app: SignetApp) -> None:
    docs = docs_of(app)
    doc, _ = docs.register(text("k"), now=T0, max_attempts=2)
    job = docs.lease(T0)
    assert job is not None
    docs.fail(job, doc.id, "network down", T0, final=False)
    assert docs.fail_job(job, "network down", T0, retry_delay_ms=60_000) == "pending"
    failed = docs.get(doc.id)
    assert failed is not None and (failed.status, failed.error) == ("failed", "network down")
    assert docs.lease(T1) is None  # waits out its back-off
    again = docs.lease(LATER)
    assert again is not None and again.attempts == 2
    docs.fail(again, doc.id, "bad input", LATER, final=True)
    completed = core_of(app).get_job(again.id)
    assert completed is not None and completed.status == "completed"
    assert completed.result == {"error": "bad input"} and docs.lease(LATER) is None


def test_connectors_keep_to_their_scope_and_count_their_documents(app: SignetApp) -> None:
    docs = docs_of(app)
    cid = docs.add_connector(provider="folder", display_name="vault", config={"path": "/v"},
                             agent_id="a", project="p", now=T0)
    assert docs.get_connector(cid, MemoryScope(project="q")) is None
    found = docs.get_connector(cid, MemoryScope(project="p"))
    assert found is not None and (found.config, found.cursor, found.status) == (
        {"path": "/v"}, {}, "idle")
    docs.set_connector_state(cid, status="idle", now=T1, cursor={"files": {"a.md": {}}},
                             synced=True)
    docs.set_connector_state(cid, status="error", now=LATER, last_error="gone")
    state = docs.get_connector(cid)
    assert state is not None and (state.status, state.last_error, state.last_sync_at) == (
        "error", "gone", T1)
    assert state.to_dict()["files"] == 1
    doc, _ = docs.register(text("k", connector=cid), now=T1, max_attempts=3)
    assert docs.document_counts(cid) == {"queued": 1}
    assert docs.connector_documents(cid) == [doc.id]
    assert [c.id for c in docs.list_connectors()] == [cid]
    assert docs.list_connectors(MemoryScope(agent_id="b")) == []
    docs.delete_connector(cid)
    assert docs.get_connector(cid) is None
    kept = docs.get(doc.id)
    assert kept is not None and kept.connector_id is None  # ON DELETE SET NULL on both


def ingest_jobs(app: SignetApp) -> tuple[int, int]:
    """(document_ingest jobs completed, those leased more than once)."""
    if app.backend.name == "postgres":
        summary = app.backend.core.job_summary("document_ingest")  # type: ignore[attr-defined]
        return summary.get("completed", 0), summary["leased_more_than_once"]
    jobs = app.jobs(job_type="document_ingest", limit=500)  # the page's most; 10 are made
    return sum(j.status == "completed" for j in jobs), sum(j.attempts > 1 for j in jobs)


def test_two_daemons_working_at_once_process_each_document_once(
    opener: Callable[[], SignetApp],
) -> None:
    one, two = opener(), opener()
    ids = [one.documents.ingest_text(
        "\n\n".join(f"Shelf {n} row {i}: crate {n * 100 + i} holds pears." for i in range(6)),
        title=f"shelf {n}").document.id for n in range(10)]
    errors: list[BaseException] = []

    def drain(app: SignetApp) -> None:
        try:
            app.run_pipeline_until_idle(only=["documents"])
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=drain, args=(app,)) for app in (one, two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    for doc_id in ids:
        shown = two.documents.get(doc_id)
        assert shown["status"] == "done" and len(shown["chunks"]) == shown["chunk_count"] > 0
    assert ingest_jobs(one) == (10, 0)  # each job leased once, by one of the two
    chunks = one.list(limit=1000)
    assert chunks.total == sum(len(two.documents.get(d)["chunks"]) for d in ids)


def test_one_source_registered_by_two_daemons_at_once_is_one_document(
    opener: Callable[[], SignetApp],
) -> None:
    """Two daemons syncing one folder register each file once: the lookup and the insert are
    one transaction under a lock of the source (PostgreSQL) or the one writer (SQLite)."""
    apps = [opener(), opener()]
    found: list[str] = []
    start = threading.Barrier(4)

    def register(app: SignetApp, key: str) -> None:
        start.wait(timeout=30)
        for _ in range(5):
            found.append(docs_of(app).register(text(key), now=T0, max_attempts=3)[0].id)

    threads = [threading.Thread(target=register, args=(app, key))
               for app in apps for key in ("same", "same")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(found) == 20 and len(set(found)) == 1
    page, total = docs_of(apps[0]).list_page(None, status=None, connector_id=None, limit=10,
                                             offset=0)
    assert total == 1


FRONT_MATTER_NOTE = """---
title: Release checklist
tags: [release, ops]
owner: dana
---
# Steps

Tag the build, then publish the changelog to the mailing list.
"""


def test_markdown_front_matter_becomes_title_and_tags_not_text(
    app: SignetApp, tmp_path: Path,
) -> None:
    note = tmp_path / "release.md"
    note.write_text(FRONT_MATTER_NOTE, "utf-8")
    doc_id = app.documents.ingest_file(note).document.id
    app.run_pipeline_until_idle(only=["documents"])
    doc = app.documents.get(doc_id)
    assert doc["status"] == "done", doc
    assert doc["title"] == "Release checklist" and doc["metadata"]["tags"] == ["release", "ops"]
    chunks = [app.get(c["memory_id"]) for c in doc["chunks"]]
    assert chunks and all("owner:" not in c.content and "---" not in c.content for c in chunks)
    assert all(c.tags == ("release", "ops") for c in chunks)
    hits = app.recall(RecallQuery("publish the changelog", mode="keyword")).hits
    assert hits and "title: Release" not in hits[0].memory.content
    assert hits[0].memory.content.startswith("# Steps")
