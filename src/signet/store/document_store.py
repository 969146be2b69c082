"""The documents' store seam: what the document service, its worker and the folder connectors need.
Each method is one transaction: registration with its `document_ingest` job, a worker's status
step (only while it holds the lease), the chunk set with the job's completion, a delete with its
chunks forgotten. The service decides; the store writes. `SharedDocuments` serves both backends;
new chunks go through the memory service's write path (`write_chunk`) inside the chunk set's
transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from signet.normalize import NormalizedContent
from signet.store import documents as doc_sql
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store.dialect import Database, Executes
from signet.store.documents import Connector, Document, NewDocument
from signet.store.jobs import Job, LostLease
from signet.types import Actor, Memory, MemoryScope, NewMemory, RememberResult

__all__ = ["DocumentStore", "PreparedChunk", "SharedDocuments", "SqliteDocuments", "link_plan"]

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


class SharedDocuments:
    """The DocumentStore both backends run: store/documents.py's statements in the backend's
    dialect, over its CoreStore's transactions and reads. A backend says how rows are read by
    column name inside a transaction, and how a memory is read (and held) there."""

    def __init__(self, core: Database, write_chunk: Callable[[Any], RememberResult]) -> None:
        """`write_chunk`: the memory service's `write_prepared`, called inside the chunk set's
        transaction, which its insert joins (as a savepoint)."""
        self.core = core
        self.backend, self.dialect = core.backend, core.dialect
        self.write_chunk = write_chunk

    # -- what a backend says --------------------------------------------------------------------
    def _tx(self) -> AbstractContextManager[Any]:
        return self.core.transaction()

    def _read(self) -> AbstractContextManager[Any]:
        return self.core.reading()

    def _rows(self, conn: Any) -> Executes:
        """`conn` (of `_tx`) with its rows read by column name."""
        return conn

    def _memory(self, conn: Any, memory_id: str, *, lock: bool = False) -> Memory | None:
        raise NotImplementedError

    def _lock_source(self, conn: Any, new: NewDocument) -> None:
        """Hold `new`'s source until the transaction ends (one writer: nothing to hold)."""

    def _enqueue(self, conn: Any, doc_id: str, now: str, max_attempts: int) -> None:
        jobs_sql.enqueue(conn, INGEST, document_id=doc_id, now=now, max_attempts=max_attempts)

    # -- the service's transactions ------------------------------------------------------------
    def register(self, new: NewDocument, *, now: str, max_attempts: int) -> tuple[Document, str]:
        d = self.dialect
        with self._tx() as conn:
            rows = self._rows(conn)
            self._lock_source(conn, new)
            known = doc_sql.find_by_source(rows, new, d)
            if known is not None and new.connector_id and known.connector_id != new.connector_id:
                doc_sql.adopt(conn, known.id, new.connector_id, d)
                known = doc_sql.get(rows, known.id, dialect=d)
                assert known is not None
            if known is not None and new.unchanged(known):
                return known, "unchanged"
            if known is None:
                doc_id = doc_sql.insert(
                    conn, source_type=new.source_type, source_key=new.source_key,
                    source_url=new.source_url, title=new.title, content_type=None,
                    raw_content=new.raw_content, agent_id=new.agent_id, project=new.project,
                    metadata=new.metadata, now=now, connector_id=new.connector_id, dialect=d,
                )
                outcome = "queued"
            else:
                doc_id, outcome = known.id, "requeued"
                doc_sql.requeue(conn, doc_id, source_type=new.source_type,
                                source_url=new.source_url, raw_content=new.raw_content,
                                metadata=new.metadata, title=new.title, now=now, dialect=d)
            self._enqueue(conn, doc_id, now, max_attempts)
            document = doc_sql.get(rows, doc_id, dialect=d)
        assert document is not None
        return document, outcome

    def get(self, doc_id: str, scope: MemoryScope | None = None) -> Document | None:
        with self._read() as conn:
            return doc_sql.get(conn, doc_id, scope, dialect=self.dialect)

    def raw_content(self, doc_id: str) -> str | None:
        with self._read() as conn:
            return doc_sql.raw_content(conn, doc_id, self.dialect)

    def chunk_links(self, doc_id: str) -> list[tuple[str, int, str | None]]:
        with self._read() as conn:
            return doc_sql.chunk_links(conn, doc_id, self.dialect)

    def list_page(
        self, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
        limit: int, offset: int,
    ) -> tuple[list[Document], int]:
        with self._read() as conn:
            return doc_sql.list_page(conn, scope, status=status, connector_id=connector_id,
                                     limit=limit, offset=offset, dialect=self.dialect)

    def delete(
        self, doc_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None
    ) -> int | None:
        d = self.dialect
        with self._tx() as conn:
            rows = self._rows(conn)
            if doc_sql.get(rows, doc_id, scope, lock=True, dialect=d) is None:
                return None
            forgotten = self._forget(conn, doc_sql.owned_live_chunks(rows, doc_id, d), actor,
                                     now, reason=f"document {doc_id} deleted")
            doc_sql.delete(conn, doc_id, d)
        return forgotten

    # -- the worker's ------------------------------------------------------------------------
    def lease(self, now: str) -> Job | None:
        with self._read() as conn:
            if not jobs_sql.claimable(conn, now, job_types=[INGEST], dialect=self.dialect):
                return None
        with self._tx() as conn:
            return jobs_sql.lease(self._rows(conn), now, job_types=[INGEST], dialect=self.dialect)

    def step(self, job: Job, doc_id: str, status: str, now: str, **fields: Any) -> None:
        with self._tx() as conn:
            self._check_owned(conn, job)
            doc_sql.set_status(conn, doc_id, status, now, self.dialect, **fields)

    def finish(self, job: Job, doc_id: str, now: str, result: dict[str, Any],
               **fields: Any) -> None:
        with self._tx() as conn:
            doc_sql.set_status(conn, doc_id, "done", now, self.dialect, completed_at=now,
                               error=None, **fields)
            self._complete(conn, job, now, result)

    def fail(self, job: Job, doc_id: str, error: str, now: str, *, final: bool) -> None:
        with self._tx() as conn:
            if not jobs_sql.owns(self._rows(conn), job, dialect=self.dialect):
                return
            doc_sql.set_status(conn, doc_id, "failed", now, self.dialect, error=error)
            if final:
                self._complete(conn, job, now, {"error": error})

    def fail_job(self, job: Job, error: str, now: str, *, retry_delay_ms: int) -> str:
        with self._tx() as conn:
            if not jobs_sql.owns(self._rows(conn), job, dialect=self.dialect):
                return ""
            return jobs_sql.fail(conn, job.id, error, now, retry_delay_ms=retry_delay_ms,
                                 dialect=self.dialect)

    def skip(self, job: Job, now: str, result: dict[str, Any]) -> None:
        with self._tx() as conn:
            self._complete(conn, job, now, result)

    def index(
        self, job: Job, document: Document, *, digest: str, hashes: Sequence[str],
        new: Mapping[int, PreparedChunk], held: Mapping[str, str], actor: Actor, now: str,
    ) -> dict[str, int]:
        d = self.dialect
        with self._tx() as conn:
            rows = self._rows(conn)
            self._check_owned(conn, job)

            def write(index: int) -> str | None:
                memory_id = self.write_chunk(new[index]).id
                memory = self._memory(conn, memory_id)
                in_slice = memory is not None and memory.agent_id == document.agent_id \
                    and memory.project == document.project
                return memory_id if in_slice else None  # an equal memory of another slice

            links, stale = link_plan(hashes, held, write)
            for memory_id, index in links:
                doc_sql.link(conn, document.id, memory_id, index, d)
            doc_sql.unlink(conn, document.id, stale, d)
            forgotten = self._forget(conn, doc_sql.owned(rows, document.id, stale, d), actor,
                                     now, reason=f"document {document.id} changed")
            result = {"chunks": len(hashes), "new": len(new), "kept": len(hashes) - len(new),
                      "forgotten": forgotten}
            doc_sql.set_status(conn, document.id, "done", now, d, memory_count=len(dict(links)),
                               completed_at=now, error=None, content_hash=digest)
            self._complete(conn, job, now, result)
        return result

    # -- connectors -------------------------------------------------------------------------
    def add_connector(
        self, *, provider: str, display_name: str | None, config: dict[str, Any],
        agent_id: str, project: str | None, now: str,
    ) -> str:
        with self._tx() as conn:
            return doc_sql.insert_connector(
                conn, provider=provider, display_name=display_name, config=config,
                agent_id=agent_id, project=project, now=now, dialect=self.dialect)

    def get_connector(
        self, connector_id: str, scope: MemoryScope | None = None
    ) -> Connector | None:
        with self._read() as conn:
            return doc_sql.get_connector(conn, connector_id, scope, self.dialect)

    def list_connectors(self, scope: MemoryScope | None = None) -> list[Connector]:
        with self._read() as conn:
            return doc_sql.list_connectors(conn, scope, self.dialect)

    def set_connector_state(
        self, connector_id: str, *, status: str, now: str, last_error: str | None = None,
        cursor: dict[str, Any] | None = None, synced: bool = False,
    ) -> None:
        with self._tx() as conn:
            doc_sql.set_connector_state(conn, connector_id, status=status, now=now,
                                        last_error=last_error, cursor=cursor, synced=synced,
                                        dialect=self.dialect)

    def set_connector_config(self, connector_id: str, config: dict[str, Any], now: str) -> None:
        with self._tx() as conn:
            doc_sql.set_connector_config(conn, connector_id, config, now, self.dialect)

    def delete_connector(self, connector_id: str) -> None:
        with self._tx() as conn:
            doc_sql.delete_connector(conn, connector_id, self.dialect)

    def document_counts(self, connector_id: str) -> dict[str, int]:
        with self._read() as conn:
            return doc_sql.document_counts(conn, connector_id, self.dialect)

    def connector_documents(self, connector_id: str) -> list[str]:
        with self._read() as conn:
            return doc_sql.connector_documents(conn, connector_id, self.dialect)

    # -- helpers ----------------------------------------------------------------------------
    def _check_owned(self, conn: Any, job: Job) -> None:
        if not jobs_sql.owns(self._rows(conn), job, dialect=self.dialect):
            raise LostLease(f"document job {job.id} is no longer leased by this worker")

    def _complete(self, conn: Any, job: Job, now: str, result: dict[str, Any]) -> None:
        jobs_sql.complete_owned(self._rows(conn), job, now, result, dialect=self.dialect)

    def _forget(self, conn: Any, memory_ids: list[str], actor: Actor, now: str, *,
                reason: str) -> int:
        """Soft-delete chunk memories, each with its history row (inside the caller's tx)."""
        count = 0
        for memory_id in memory_ids:
            memory = self._memory(conn, memory_id, lock=True)
            if memory is None or memory.is_deleted:
                continue
            mem_sql.soft_delete(conn, memory_id, now, self.dialect)
            history_sql.record(conn, memory_id, "deleted", actor, now, dialect=self.dialect,
                               old_content=memory.content, reason=reason)
            count += 1
        return count


class SqliteDocuments(SharedDocuments):
    def _memory(self, conn: Any, memory_id: str, *, lock: bool = False) -> Memory | None:
        return mem_sql.get(conn, memory_id)
