"""The documents' store seam: what the document service, its worker and the folder connectors
need from a store, as one protocol with a SQLite and a PostgreSQL side.

Each method is one transaction on its backend: registration (find the source in its slice,
insert or requeue, enqueue the `document_ingest` job), a worker's status step (only while it
still holds the job's lease), the whole chunk set with the job's completion, a delete with
its chunks forgotten. The service above decides (validation, scope, "unchanged"), the store
writes; the contract tests (tests/store/test_document_contract.py) run one suite on both.

- `SqliteDocuments`: today's SQL functions (store/documents.py) on a `Store`; a new chunk is
  written by the memory service's own write path (`write_chunk`, a savepoint inside the
  chunk set's transaction), so chunks get what every memory gets there.
- `PostgresDocuments` (store/postgres/documents.py): the same contract on PostgresCore's pool.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from signet.normalize import NormalizedContent
from signet.store import documents as doc_sql
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store.db import Store
from signet.store.documents import Connector, Document, NewDocument
from signet.store.jobs import Job, LostLease
from signet.types import Actor, MemoryScope, NewMemory, RememberResult

__all__ = ["DocumentStore", "PreparedChunk", "SqliteDocuments", "link_plan"]

INGEST = "document_ingest"


class PreparedChunk(Protocol):
    """A chunk validated, normalised and perhaps embedded (pipeline/writes.py PreparedMemory)."""

    @property
    def memory(self) -> NewMemory: ...

    @property
    def norm(self) -> NormalizedContent: ...

    @property
    def vector(self) -> np.ndarray | None: ...

    @property
    def actor(self) -> Actor: ...


class DocumentStore(Protocol):
    backend: str

    # -- the service's transactions ------------------------------------------------------------
    def register(self, new: NewDocument, *, now: str, max_attempts: int) -> tuple[Document, str]:
        """Find the source in its slice (a local file by its path too, whoever registered it:
        one document per file, adopted by the connector registering it); answer it
        "unchanged" (NewDocument.unchanged), else requeue it ("requeued") or insert it
        ("queued") and enqueue its ingest job."""
        ...

    def get(self, doc_id: str, scope: MemoryScope | None = None) -> Document | None: ...

    def raw_content(self, doc_id: str) -> str | None: ...

    def chunk_links(self, doc_id: str) -> list[tuple[str, int, str | None]]:
        """(memory id, chunk index, content hash) of the document's chunks, in order."""
        ...

    def list_page(
        self, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
        limit: int, offset: int,
    ) -> tuple[list[Document], int]: ...

    def delete(
        self, doc_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None
    ) -> int | None:
        """Forget the live chunks the document wrote (history kept) and remove it; how many
        were forgotten, or None when the document is unknown or outside `scope`."""
        ...

    # -- the worker's ------------------------------------------------------------------------
    def lease(self, now: str) -> Job | None:
        """The oldest claimable `document_ingest` job, leased to the caller (one daemon only)."""
        ...

    def step(self, job: Job, doc_id: str, status: str, now: str, **fields: Any) -> None:
        """Move the document to `status`; LostLease when the job is no longer the caller's."""
        ...

    def finish(self, job: Job, doc_id: str, now: str, result: dict[str, Any],
               **fields: Any) -> None:
        """Mark the document done and complete the job together (LostLease rolls back)."""
        ...

    def fail(self, job: Job, doc_id: str, error: str, now: str, *, final: bool) -> None:
        """Mark the document failed while the job is the caller's; `final` (bad input that no
        retry can help) completes the job too."""
        ...

    def fail_job(self, job: Job, error: str, now: str, *, retry_delay_ms: int) -> str:
        """The job back to pending after the delay (dead on its last attempt); '' when it was
        no longer the caller's."""
        ...

    def skip(self, job: Job, now: str, result: dict[str, Any]) -> None:
        """Complete a job whose document is gone."""
        ...

    def index(
        self, job: Job, document: Document, *, digest: str, hashes: Sequence[str],
        new: Mapping[int, PreparedChunk], held: Mapping[str, str], actor: Actor, now: str,
    ) -> dict[str, int]:
        """The whole chunk set in one transaction: write the `new` chunks (by index), link
        every chunk of `hashes` in order, unlink and forget (when the document wrote them) the
        `held` chunks no longer there, mark the document done with `digest` and complete the
        job; LostLease rolls it all back. Returns the job's result counts."""
        ...

    # -- connectors -------------------------------------------------------------------------
    def add_connector(
        self, *, provider: str, display_name: str | None, config: dict[str, Any],
        agent_id: str, project: str | None, now: str,
    ) -> str: ...

    def get_connector(
        self, connector_id: str, scope: MemoryScope | None = None
    ) -> Connector | None: ...

    def list_connectors(self, scope: MemoryScope | None = None) -> list[Connector]: ...

    def set_connector_state(
        self, connector_id: str, *, status: str, now: str, last_error: str | None = None,
        cursor: dict[str, Any] | None = None, synced: bool = False,
    ) -> None: ...

    def set_connector_config(self, connector_id: str, config: dict[str, Any], now: str) -> None:
        """Replace the connector's configuration (its folder, host, enabled flag)."""
        ...

    def delete_connector(self, connector_id: str) -> None: ...

    def document_counts(self, connector_id: str) -> dict[str, int]: ...

    def connector_documents(self, connector_id: str) -> list[str]: ...


def link_plan(
    hashes: Sequence[str], held: Mapping[str, str], write: Callable[[int], str | None]
) -> tuple[list[tuple[str, int]], list[str]]:
    """The chunk set's links: (memory id, chunk index) for each chunk in order, a held chunk
    kept and any other written by `write(index)` (None: the memory may not be linked, e.g. an
    equal memory of another slice); and the held memories no longer in the set."""
    links: list[tuple[str, int]] = []
    for index, content_hash in enumerate(hashes):
        memory_id = held.get(content_hash) or write(index)
        if memory_id is not None:
            links.append((memory_id, index))
    linked = {m for m, _ in links}
    return links, [m for m in held.values() if m not in linked]


class SqliteDocuments:
    """DocumentStore on the SQLite store: store/documents.py's functions, unchanged."""

    backend = "sqlite"

    def __init__(self, store: Store, write_chunk: Callable[[Any], RememberResult]) -> None:
        self.store = store
        self.write_chunk = write_chunk

    def register(self, new: NewDocument, *, now: str, max_attempts: int) -> tuple[Document, str]:
        with self.store.write_tx() as conn:
            known = doc_sql.find_by_source(conn, new)
            if known is not None and new.connector_id and known.connector_id != new.connector_id:
                doc_sql.adopt(conn, known.id, new.connector_id)
                known = doc_sql.get(conn, known.id)
                assert known is not None
            if known is not None and new.unchanged(known):
                return known, "unchanged"
            if known is None:
                doc_id = doc_sql.insert(
                    conn, source_type=new.source_type, source_key=new.source_key,
                    source_url=new.source_url, title=new.title, content_type=None,
                    raw_content=new.raw_content, agent_id=new.agent_id, project=new.project,
                    metadata=new.metadata, now=now, connector_id=new.connector_id,
                )
                outcome = "queued"
            else:
                doc_id, outcome = known.id, "requeued"
                doc_sql.requeue(conn, doc_id, source_type=new.source_type,
                                source_url=new.source_url, raw_content=new.raw_content,
                                metadata=new.metadata, title=new.title, now=now)
            jobs_sql.enqueue(conn, INGEST, document_id=doc_id, now=now, max_attempts=max_attempts)
            document = doc_sql.get(conn, doc_id)
        assert document is not None
        return document, outcome

    def get(self, doc_id: str, scope: MemoryScope | None = None) -> Document | None:
        return doc_sql.get(self.store.reader(), doc_id, scope)

    def raw_content(self, doc_id: str) -> str | None:
        return doc_sql.raw_content(self.store.reader(), doc_id)

    def chunk_links(self, doc_id: str) -> list[tuple[str, int, str | None]]:
        return doc_sql.chunk_links(self.store.reader(), doc_id)

    def list_page(
        self, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
        limit: int, offset: int,
    ) -> tuple[list[Document], int]:
        return doc_sql.list_page(self.store.reader(), scope, status=status,
                                 connector_id=connector_id, limit=limit, offset=offset)

    def delete(
        self, doc_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None
    ) -> int | None:
        with self.store.write_tx() as conn:
            if doc_sql.get(conn, doc_id, scope) is None:
                return None
            forgotten = _forget(conn, doc_sql.owned_live_chunks(conn, doc_id), actor, now,
                                reason=f"document {doc_id} deleted")
            doc_sql.delete(conn, doc_id)
        return forgotten

    # -- the worker's ------------------------------------------------------------------------
    def lease(self, now: str) -> Job | None:
        with self.store.write_tx() as conn:
            return jobs_sql.lease(conn, now, job_types=[INGEST])

    def step(self, job: Job, doc_id: str, status: str, now: str, **fields: Any) -> None:
        with self.store.write_tx() as conn:
            _check_owned(conn, job)
            doc_sql.set_status(conn, doc_id, status, now, **fields)

    def finish(self, job: Job, doc_id: str, now: str, result: dict[str, Any],
               **fields: Any) -> None:
        with self.store.write_tx() as conn:
            doc_sql.set_status(conn, doc_id, "done", now, completed_at=now, error=None, **fields)
            jobs_sql.complete_owned(conn, job, now, result)

    def fail(self, job: Job, doc_id: str, error: str, now: str, *, final: bool) -> None:
        with self.store.write_tx() as conn:
            if not jobs_sql.owns(conn, job):
                return
            doc_sql.set_status(conn, doc_id, "failed", now, error=error)
            if final:
                jobs_sql.complete_owned(conn, job, now, {"error": error})

    def fail_job(self, job: Job, error: str, now: str, *, retry_delay_ms: int) -> str:
        with self.store.write_tx() as conn:
            if not jobs_sql.owns(conn, job):
                return ""
            return jobs_sql.fail(conn, job.id, error, now, retry_delay_ms=retry_delay_ms)

    def skip(self, job: Job, now: str, result: dict[str, Any]) -> None:
        with self.store.write_tx() as conn:
            jobs_sql.complete_owned(conn, job, now, result)

    def index(
        self, job: Job, document: Document, *, digest: str, hashes: Sequence[str],
        new: Mapping[int, PreparedChunk], held: Mapping[str, str], actor: Actor, now: str,
    ) -> dict[str, int]:
        with self.store.write_tx() as conn:
            _check_owned(conn, job)

            def write(index: int) -> str | None:
                memory_id = self.write_chunk(new[index]).id
                return memory_id if _in_slice(conn, memory_id, document) else None

            links, stale = link_plan(hashes, held, write)
            for memory_id, index in links:
                doc_sql.link(conn, document.id, memory_id, index)
            doc_sql.unlink(conn, document.id, stale)
            forgotten = _forget(conn, [m for m in stale if _owned(conn, m, document.id)], actor,
                                now, reason=f"document {document.id} changed")
            result = {"chunks": len(hashes), "new": len(new), "kept": len(hashes) - len(new),
                      "forgotten": forgotten}
            doc_sql.set_status(conn, document.id, "done", now, memory_count=len(dict(links)),
                               completed_at=now, error=None, content_hash=digest)
            jobs_sql.complete_owned(conn, job, now, result)
        return result

    # -- connectors -------------------------------------------------------------------------
    def add_connector(
        self, *, provider: str, display_name: str | None, config: dict[str, Any],
        agent_id: str, project: str | None, now: str,
    ) -> str:
        with self.store.write_tx() as conn:
            return doc_sql.insert_connector(conn, provider=provider, display_name=display_name,
                                            config=config, agent_id=agent_id, project=project,
                                            now=now)

    def get_connector(
        self, connector_id: str, scope: MemoryScope | None = None
    ) -> Connector | None:
        return doc_sql.get_connector(self.store.reader(), connector_id, scope)

    def list_connectors(self, scope: MemoryScope | None = None) -> list[Connector]:
        return doc_sql.list_connectors(self.store.reader(), scope)

    def set_connector_state(
        self, connector_id: str, *, status: str, now: str, last_error: str | None = None,
        cursor: dict[str, Any] | None = None, synced: bool = False,
    ) -> None:
        with self.store.write_tx() as conn:
            doc_sql.set_connector_state(conn, connector_id, status=status, now=now,
                                        last_error=last_error, cursor=cursor, synced=synced)

    def set_connector_config(self, connector_id: str, config: dict[str, Any], now: str) -> None:
        with self.store.write_tx() as conn:
            doc_sql.set_connector_config(conn, connector_id, config, now)

    def delete_connector(self, connector_id: str) -> None:
        with self.store.write_tx() as conn:
            doc_sql.delete_connector(conn, connector_id)

    def document_counts(self, connector_id: str) -> dict[str, int]:
        return doc_sql.document_counts(self.store.reader(), connector_id)

    def connector_documents(self, connector_id: str) -> list[str]:
        return doc_sql.connector_documents(self.store.reader(), connector_id)


def _check_owned(conn: Any, job: Job) -> None:
    if not jobs_sql.owns(conn, job):
        raise LostLease(f"document job {job.id} is no longer leased by this worker")


def _forget(conn: Any, memory_ids: list[str], actor: Actor, now: str, *, reason: str) -> int:
    """Soft-delete chunk memories, each with its history row (inside the caller's tx)."""
    count = 0
    for memory_id in memory_ids:
        memory = mem_sql.get(conn, memory_id)
        if memory is None or memory.is_deleted:
            continue
        mem_sql.soft_delete(conn, memory_id, now)
        history_sql.record(conn, memory_id, "deleted", actor, now, old_content=memory.content,
                           reason=reason)
        count += 1
    return count


def _in_slice(conn: Any, memory_id: str, document: Document) -> bool:
    memory = mem_sql.get(conn, memory_id)
    return memory is not None and memory.agent_id == document.agent_id \
        and memory.project == document.project


def _owned(conn: Any, memory_id: str, doc_id: str) -> bool:
    memory = mem_sql.get(conn, memory_id)
    return memory is not None and memory.source_id == doc_id
