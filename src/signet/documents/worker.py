"""The `document_ingest` worker: one document per tick, extracting -> chunking -> embedding ->
indexing -> done.

Each status change is its own short transaction, so no network, file or model work holds the write
lock; one final transaction writes the chunk set, forgets the chunks no longer there and completes
the job, so a crash leaves nothing half-written. Bad input fails at once; other errors retry with
back-off. Every transaction is a DocumentStore method, so it runs on both backends.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from signet.documents.chunking import chunk_text
from signet.documents.extract import Extracted, extract
from signet.documents.fetch import FetchPolicy, fetch
from signet.errors import Forbidden, InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.pipeline.writes import PreparedMemory
from signet.store import documents as doc_sql
from signet.store.document_store import DocumentStore
from signet.store.jobs import Job, LostLease
from signet.types import Actor, dumps, format_ts
from signet.workers.leasing import RETRY_BASE_MS, describe_error, retry_delay_ms

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

CHUNK_IMPORTANCE = 0.3
PERMANENT = (InvalidInput, Forbidden, NotFound)


class ChunkWriter(Protocol):
    """The memory service's first half of a write (services/memory.py, on either store):
    the same validation, normalisation and embedding as remember; the store's chunk set
    transaction writes them (store/document_store.py)."""

    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> list[PreparedMemory]: ...


class DocumentWorker:
    name = "documents"

    def __init__(
        self, docs: DocumentStore, writer: ChunkWriter, *, chunk_size: int, chunk_overlap: int,
        fetch_policy: FetchPolicy, max_file_bytes: int, max_chunk_chars: int,
        frozen: bool = False, transport: httpx.BaseTransport | None = None,
        retry_base_ms: int = RETRY_BASE_MS,
    ) -> None:
        self.docs = docs
        self.writer = writer
        # A chunk must fit in one memory (memory.maxContentChars).
        self.chunk_size = min(chunk_size, max_chunk_chars)
        self.chunk_overlap = chunk_overlap
        self.fetch_policy = fetch_policy
        self.max_file_bytes = max_file_bytes
        self.frozen = frozen
        self.transport = transport
        self.retry_base_ms = retry_base_ms

    def tick(self, now: datetime) -> bool:
        """One leased job: a lost lease leaves it to its new owner, any other failure fails
        the job (back-off, then dead: workers/leasing.py)."""
        if self.frozen:
            return False
        job = self.docs.lease(format_ts(now))
        if job is None:
            return False
        try:
            self._work(job, now)
        except LostLease as exc:  # another worker owns the job now; its outcome stands
            log.warning("%s", exc)
        except Exception as exc:  # any failure belongs to the job, not to the loop
            log.warning("document job %s failed (attempt %d/%d): %s", job.id, job.attempts,
                        job.max_attempts, describe_error(exc))
            self.docs.fail_job(job, describe_error(exc), format_ts(now),
                               retry_delay_ms=retry_delay_ms(job.attempts, self.retry_base_ms))
        return True

    # -- one document -----------------------------------------------------------------------------

    def _work(self, job: Job, now: datetime) -> None:
        doc_id = job.document_id or ""
        document = self.docs.get(doc_id)
        if document is None:  # deleted while queued
            self.docs.skip(job, format_ts(now), {"skipped": "document deleted"})
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
        if "\x00" in text:  # a binary file read as text; PostgreSQL text could not hold it
            raise InvalidInput("the document's text holds a NUL character (U+0000): not a text file")
        raw = extracted.raw.strip()  # with its front matter: a new title or tag is a change
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
        links = self.docs.chunk_links(document.id)
        fields: dict[str, Any] = {"content_type": extracted.content_type, "raw_content": raw}
        if extracted.title and not document.title:
            fields["title"] = extracted.title
        if extracted.tags or "tags" in document.metadata:
            fields["metadata_json"] = dumps({**document.metadata, "tags": list(extracted.tags)})
        # content_hash is written only with a finished chunk set, so equality means exactly
        # this text is indexed already.
        if digest == document.content_hash and links:
            self.docs.finish(job, document.id, format_ts(now), {"unchanged": True}, **fields)
            return
        self._step(job, document.id, "chunking", now, **fields)
        chunks = chunk_text(text, self.chunk_size, self.chunk_overlap)
        self._step(job, document.id, "embedding", now, chunk_count=len(chunks))
        held = {h: m for m, _i, h in links if h}
        hashes = [normalize_content(c).content_hash for c in chunks]
        todo = [i for i, h in enumerate(hashes) if h not in held]
        actor = Actor(name="documents", type="daemon", agent_id=document.agent_id)
        prepared = self.writer.prepare_memories(
            [self._chunk_fields(document, chunks[i], extracted.tags) for i in todo], actor=actor,
            prefixes=False
        )
        self._step(job, document.id, "indexing", now)
        # The whole chunk set in one transaction, the job completed in it too.
        self.docs.index(job, document, digest=digest, hashes=hashes,
                        new=dict(zip(todo, prepared, strict=True)), held=held, actor=actor,
                        now=format_ts(now))

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
        raw = self.docs.raw_content(document.id) or ""
        return extract(raw.encode("utf-8"), content_type="text/markdown")

    def _chunk_fields(
        self, document: doc_sql.Document, chunk: str, tags: tuple[str, ...]
    ) -> dict[str, Any]:
        return {"content": chunk, "type": "document_chunk", "importance": CHUNK_IMPORTANCE,
                "source_id": document.id, "source_type": "document", "project": document.project,
                "tags": list(tags)}

    # -- status steps -----------------------------------------------------------------------------

    def _step(self, job: Job, doc_id: str, status: str, now: datetime, **fields: Any) -> None:
        self.docs.step(job, doc_id, status, format_ts(now), **fields)

    def _fail(self, job: Job, doc_id: str, exc: BaseException, now: datetime, *, final: bool) -> None:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        log.warning("document %s failed: %s", doc_id, error)
        self.docs.fail(job, doc_id, error, format_ts(now), final=final)
