"""The `document_ingest` worker (seed 002): one queued document per tick, through
extracting -> chunking -> embedding -> indexing -> done.

Each status change is its own short write transaction, so the current step is always visible
and no network, file or model work ever runs while the write lock is held:

1. extracting: read the pasted text, the file, or fetch the URL (fetch.py); turn it into text
   (extract.py). When its hash equals the one last indexed, the document is unchanged: done.
2. chunking: cut it on paragraph and sentence boundaries (documentChunkSize/-Overlap).
3. embedding: validate, normalise and embed the chunks the document does not already hold (a
   chunk whose hash is linked to the document already is kept, not re-embedded).
4. indexing: one transaction writes the whole chunk set (each chunk a `document_chunk` memory,
   importance 0.3, `source_id` = the document, linked through document_memories), forgets the
   chunks of an earlier version that are no longer there (history kept), marks the document
   done and completes the job. A crash before it commits leaves no half-written chunk set:
   the job's lease expires, the reaper hands it back, and the next attempt starts over.

Bad input (unsupported type, a refused URL, an empty document) fails the document at once,
naming the problem; anything else (a network error) fails it too and the job retries with
back-off, then dead-letters (workers/leasing.py).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import httpx

from signet.documents.chunking import chunk_text
from signet.documents.extract import Extracted, extract
from signet.documents.fetch import FetchPolicy, fetch
from signet.documents.service import forget_chunks
from signet.errors import Forbidden, InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.pipeline.writes import PreparedMemory
from signet.store import documents as doc_sql
from signet.store import memories as mem_sql
from signet.store.db import Store
from signet.store.jobs import Job
from signet.types import Actor, RememberResult, format_ts
from signet.workers.leasing import JobRunner, LostLease, complete_job, owns

log = logging.getLogger(__name__)

CHUNK_IMPORTANCE = 0.3
PERMANENT = (InvalidInput, Forbidden, NotFound)


class ChunkWriter(Protocol):
    """The memory service's write path (services/memory.py): the same validation, dedup,
    history and jobs as remember."""

    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> list[PreparedMemory]: ...

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult: ...


class DocumentWorker:
    name = "documents"

    def __init__(
        self, store: Store, writer: ChunkWriter, *, chunk_size: int, chunk_overlap: int,
        fetch_policy: FetchPolicy, max_file_bytes: int, max_chunk_chars: int,
        frozen: bool = False, transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.store = store
        self.writer = writer
        # A chunk must fit in one memory (memory.maxContentChars).
        self.chunk_size = min(chunk_size, max_chunk_chars)
        self.chunk_overlap = chunk_overlap
        self.fetch_policy = fetch_policy
        self.max_file_bytes = max_file_bytes
        self.frozen = frozen
        self.transport = transport
        self.jobs = JobRunner(store, "document_ingest", self._work)

    def tick(self, now: datetime) -> bool:
        if self.frozen:
            return False
        return self.jobs.tick(now)

    # -- one document -----------------------------------------------------------------------

    def _work(self, job: Job, now: datetime) -> None:
        doc_id = job.document_id or ""
        document = doc_sql.get(self.store.reader(), doc_id)
        if document is None:  # deleted while queued
            with self.store.write_tx() as conn:
                complete_job(conn, job, now, {"skipped": "document deleted"})
            return
        try:
            self._ingest(job, document, now)
        except PERMANENT as exc:
            self._fail(job, doc_id, exc, now, final=True)
        except LostLease:
            raise
        except Exception as exc:
            self._fail(job, doc_id, exc, now, final=False)
            raise

    def _ingest(self, job: Job, document: doc_sql.Document, now: datetime) -> None:
        self._step(job, document.id, "extracting", now)
        extracted = self._extract(document)
        text = extracted.text.strip()
        if not text:
            raise InvalidInput("the document has no text to ingest")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        links = doc_sql.chunk_links(self.store.reader(), document.id)
        fields: dict[str, Any] = {"content_type": extracted.content_type, "raw_content": text}
        if extracted.title and not document.title:
            fields["title"] = extracted.title
        # content_hash is written only with a finished chunk set, so equality means exactly
        # this text is indexed already.
        if digest == document.content_hash and links:
            self._finish(job, document.id, now, {"unchanged": True}, **fields)
            return
        self._step(job, document.id, "chunking", now, **fields)
        chunks = chunk_text(text, self.chunk_size, self.chunk_overlap)
        self._step(job, document.id, "embedding", now, chunk_count=len(chunks))
        held = {h: m for m, _i, h in links if h}
        hashes = [normalize_content(c).content_hash for c in chunks]
        todo = [i for i, h in enumerate(hashes) if h not in held]
        actor = Actor(name="documents", type="daemon", agent_id=document.agent_id)
        prepared = self.writer.prepare_memories(
            [self._chunk_fields(document, chunks[i]) for i in todo], actor=actor, prefixes=False
        )
        self._step(job, document.id, "indexing", now)
        self._index(job, document, now, digest, hashes, dict(zip(todo, prepared, strict=True)),
                    held)

    def _extract(self, document: doc_sql.Document) -> Extracted:
        if document.source_type == "url":
            fetched = fetch(document.source_url or "", self.fetch_policy, self.transport)
            return extract(fetched.data, content_type=fetched.content_type, name=fetched.url)
        if document.source_type == "file":
            path = Path(document.source_url or "")
            if not path.is_file():
                raise InvalidInput(f"the file is gone: {path}")
            if path.stat().st_size > self.max_file_bytes:
                raise InvalidInput(f"file {path} is larger than {self.max_file_bytes} bytes")
            return extract(path.read_bytes(), name=str(path))
        raw = doc_sql.raw_content(self.store.reader(), document.id) or ""
        return extract(raw.encode("utf-8"), content_type="text/markdown")

    def _chunk_fields(self, document: doc_sql.Document, chunk: str) -> dict[str, Any]:
        return {"content": chunk, "type": "document_chunk", "importance": CHUNK_IMPORTANCE,
                "source_id": document.id, "source_type": "document", "project": document.project}

    def _index(
        self, job: Job, document: doc_sql.Document, now: datetime, digest: str,
        hashes: list[str], prepared: dict[int, PreparedMemory], held: dict[str, str],
    ) -> None:
        """The whole chunk set in one transaction, the job completed in it too."""
        ts = format_ts(now)
        with self.store.write_tx() as conn:
            if not owns(conn, job):
                raise LostLease(f"document job {job.id} is no longer leased by this worker")
            linked: set[str] = set()
            for index, content_hash in enumerate(hashes):
                memory_id = held.get(content_hash)
                if memory_id is None:
                    memory_id = self.writer.write_prepared(prepared[index]).id
                    if not _in_slice(conn, memory_id, document):
                        continue  # an equal memory of another slice: never linked across
                doc_sql.link(conn, document.id, memory_id, index)
                linked.add(memory_id)
            stale = [m for m in held.values() if m not in linked]
            doc_sql.unlink(conn, document.id, stale)
            forgotten = forget_chunks(
                conn, [m for m in stale if _owned(conn, m, document.id)],
                Actor(name="documents", type="daemon", agent_id=document.agent_id), ts,
                reason=f"document {document.id} changed",
            )
            result = {"chunks": len(hashes), "new": len(prepared),
                      "kept": len(hashes) - len(prepared), "forgotten": forgotten}
            doc_sql.set_status(conn, document.id, "done", ts, memory_count=len(linked),
                               completed_at=ts, error=None, content_hash=digest)
            complete_job(conn, job, now, result)

    # -- status steps ------------------------------------------------------------------------

    def _step(self, job: Job, doc_id: str, status: str, now: datetime, **fields: Any) -> None:
        with self.store.write_tx() as conn:
            if not owns(conn, job):
                raise LostLease(f"document job {job.id} is no longer leased by this worker")
            doc_sql.set_status(conn, doc_id, status, format_ts(now), **fields)

    def _finish(self, job: Job, doc_id: str, now: datetime, result: dict[str, Any],
                **fields: Any) -> None:
        ts = format_ts(now)
        with self.store.write_tx() as conn:
            doc_sql.set_status(conn, doc_id, "done", ts, completed_at=ts, error=None, **fields)
            complete_job(conn, job, now, result)

    def _fail(self, job: Job, doc_id: str, exc: BaseException, now: datetime, *, final: bool) -> None:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        log.warning("document %s failed: %s", doc_id, error)
        with self.store.write_tx() as conn:
            if not owns(conn, job):
                return
            doc_sql.set_status(conn, doc_id, "failed", format_ts(now), error=error)
            if final:  # bad input: retrying cannot help
                complete_job(conn, job, now, {"error": error})


def _in_slice(conn: Any, memory_id: str, document: doc_sql.Document) -> bool:
    memory = mem_sql.get(conn, memory_id)
    return memory is not None and memory.agent_id == document.agent_id \
        and memory.project == document.project


def _owned(conn: Any, memory_id: str, doc_id: str) -> bool:
    memory = mem_sql.get(conn, memory_id)
    return memory is not None and memory.source_id == doc_id

