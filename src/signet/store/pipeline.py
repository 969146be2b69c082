"""The pipeline's store seam: what the extraction and hints workers read and write. A
`PipelineStore` gives the reads outside a transaction, the job lease, and `write()`: one
transaction as a `PipelineTx`, so a lost lease or any failure rolls all of it back on either
backend. The memory service's write inside `write()` joins it as a savepoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import numpy as np

from signet.store import cold as cold_sql
from signet.store import embeddings as emb_sql
from signet.store import graph as graph_sql
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import review as review_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Database, Dialect
from signet.store.jobs import Job
from signet.store.review import ReviewItem
from signet.types import Actor, Memory

__all__ = ["PipelineStore", "PipelineTx", "CorePipeline", "SqlitePipeline", "SqlitePipelineTx"]


class PipelineTx(Protocol):
    """The statements of one pipeline write transaction (see the module docstring)."""

    def get_memory(self, memory_id: str) -> Memory | None: ...

    # -- the job being worked on ------------------------------------------------------------
    def get_job(self, job_id: str) -> Job | None: ...

    def complete_job(self, job_id: str, now: str, result: dict[str, Any] | None) -> bool: ...

    def fail_job(self, job_id: str, error: str, now: str, *, retry_delay_ms: int) -> str: ...

    def release_job(self, job_id: str, now: str) -> None: ...

    def enqueue(self, job_type: str, memory_id: str, now: str, *, max_attempts: int) -> None: ...

    # -- the memory's state -----------------------------------------------------------------
    def set_extraction_status(self, memory_id: str, status: str, model: str | None) -> None: ...

    def set_hints(self, memory_id: str, hints: str) -> None: ...

    def find_live_by_hash(
        self, content_hash: str, agent_id: str, project: str | None
    ) -> str | None: ...

    def update_columns(self, memory_id: str, columns: dict[str, Any], now: str) -> None:
        """Column changes, version + 1 (history is the caller's `record`)."""
        ...

    def soft_delete(self, memory_id: str, now: str) -> None: ...

    def record(
        self, memory_id: str, event: str, actor: Actor, now: str, *,
        old_content: str | None = None, new_content: str | None = None,
        reason: str | None = None, metadata: dict[str, Any] | None = None,
    ) -> None:
        """One memory_history row."""
        ...

    def archive_cold(self, memory: Memory, *, reason: str, archived_by: str, now: str) -> int:
        """Snapshot `memory` into the cold tier; the cold row's id."""
        ...

    def has_vector(self, content_hash: str, model: str) -> bool: ...

    def store_vector(
        self, content_hash: str, vector: np.ndarray, *, model: str, now: str, memory_id: str
    ) -> None: ...

    def relink(self, memory_id: str, agent_id: str, content: str, now: str) -> None:
        """New text: drop the memory's entity links, link the known entities it names now."""
        ...

    def add_review(
        self, *, memory_id: str, source_memory_id: str | None, action: str, old_content: str,
        new_content: str | None, proposal: dict[str, Any], verdict: dict[str, Any] | None,
        reason: str, now: str, target_version: int | None = None,
    ) -> str:
        """Park a proposal in the review queue; the item's id."""
        ...

    def get_review(self, item_id: str) -> ReviewItem | None: ...

    def resolve_review(self, item_id: str, status: str, resolved_by: str, now: str) -> bool:
        """Close a pending item as approved or rejected; False when it is not pending."""
        ...


class PipelineStore(Protocol):
    backend: str

    @property
    def in_write_tx(self) -> bool: ...

    def get_memory(self, memory_id: str) -> Memory | None: ...

    def vector_for(self, content_hash: str, model: str) -> np.ndarray | None: ...

    def lease(self, now: str, *, job_types: list[str]) -> Job | None: ...

    def write(self) -> AbstractContextManager[PipelineTx]: ...

    def review_items(
        self, status: str | None, *, limit: int, offset: int = 0
    ) -> list[ReviewItem]:
        """Review items of one status (all with None), oldest first."""
        ...

    def review_id(self, ref: str) -> str:
        """The id of the review item `ref` names, whole or by a unique prefix (NotFound,
        or InvalidInput `ambiguous_id`; store/prefixes.py)."""
        ...


class SqlitePipelineTx:
    """PipelineTx on the SQLite writer's connection: store/ functions, unchanged. The
    statements take `dialect`, so PostgreSQL's transaction (store/postgres/pipeline.py) is this
    class in its dialect, with what it does its own way overridden."""

    dialect: Dialect = SQLITE

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get_memory(self, memory_id: str) -> Memory | None:
        return mem_sql.get(self.conn, memory_id)

    def get_job(self, job_id: str) -> Job | None:
        return jobs_sql.get(self.conn, job_id)

    def complete_job(self, job_id: str, now: str, result: dict[str, Any] | None) -> bool:
        return jobs_sql.complete(self.conn, job_id, now, result, dialect=self.dialect)

    def fail_job(self, job_id: str, error: str, now: str, *, retry_delay_ms: int) -> str:
        return jobs_sql.fail(self.conn, job_id, error, now, retry_delay_ms=retry_delay_ms,
                             dialect=self.dialect)

    def release_job(self, job_id: str, now: str) -> None:
        jobs_sql.release_leases(self.conn, now, job_ids=[job_id])

    def enqueue(self, job_type: str, memory_id: str, now: str, *, max_attempts: int) -> None:
        jobs_sql.enqueue(self.conn, job_type, memory_id=memory_id, now=now,
                         max_attempts=max_attempts)

    def set_extraction_status(self, memory_id: str, status: str, model: str | None) -> None:
        mem_sql.set_extraction_status(self.conn, memory_id, status, model, self.dialect)

    def set_hints(self, memory_id: str, hints: str) -> None:
        mem_sql.set_hints(self.conn, memory_id, hints, self.dialect)

    def find_live_by_hash(
        self, content_hash: str, agent_id: str, project: str | None
    ) -> str | None:
        return mem_sql.find_live_by_hash(self.conn, content_hash, agent_id, project, self.dialect)

    def update_columns(self, memory_id: str, columns: dict[str, Any], now: str) -> None:
        mem_sql.update(self.conn, memory_id, columns, now, self.dialect)

    def soft_delete(self, memory_id: str, now: str) -> None:
        mem_sql.soft_delete(self.conn, memory_id, now, self.dialect)

    def record(
        self, memory_id: str, event: str, actor: Actor, now: str, *,
        old_content: str | None = None, new_content: str | None = None,
        reason: str | None = None, metadata: dict[str, Any] | None = None,
    ) -> None:
        history_sql.record(self.conn, memory_id, event, actor, now, old_content=old_content,
                           new_content=new_content, reason=reason, metadata=metadata,
                           dialect=self.dialect)

    def archive_cold(self, memory: Memory, *, reason: str, archived_by: str, now: str) -> int:
        return cold_sql.archive(self.conn, memory, reason=reason, archived_by=archived_by, now=now,
                                dialect=self.dialect)

    def has_vector(self, content_hash: str, model: str) -> bool:
        return emb_sql.has_current(self.conn, content_hash, model, self.dialect)

    def store_vector(
        self, content_hash: str, vector: np.ndarray, *, model: str, now: str, memory_id: str
    ) -> None:
        emb_sql.upsert(self.conn, content_hash, vector, model=model, now=now, source_id=memory_id)

    def relink(self, memory_id: str, agent_id: str, content: str, now: str) -> None:
        graph_sql.unlink_memory(self.conn, memory_id)
        graph_sql.link_known_entities(self.conn, memory_id, agent_id, content, now)

    def add_review(
        self, *, memory_id: str, source_memory_id: str | None, action: str, old_content: str,
        new_content: str | None, proposal: dict[str, Any], verdict: dict[str, Any] | None,
        reason: str, now: str, target_version: int | None = None,
    ) -> str:
        return review_sql.add(
            self.conn, memory_id=memory_id, source_memory_id=source_memory_id, action=action,
            old_content=old_content, new_content=new_content, proposal=proposal,
            verdict=verdict, reason=reason, now=now, target_version=target_version,
            dialect=self.dialect,
        )

    def get_review(self, item_id: str) -> ReviewItem | None:
        return review_sql.get(self.conn, item_id)

    def resolve_review(self, item_id: str, status: str, resolved_by: str, now: str) -> bool:
        return review_sql.resolve(self.conn, item_id, status, resolved_by, now, self.dialect)


class PipelineCore(Database, Protocol):
    """What the pipeline seam reads through its backend's CoreStore (store/backend.py)."""

    @property
    def in_write_tx(self) -> bool: ...

    def get_memory(self, memory_id: str) -> Memory | None: ...

    def lease(self, now: str, *, job_types: list[str]) -> Job | None: ...

    def resolve_id(self, table: str, ref: str, *, noun: str) -> str: ...


class CorePipeline:
    """The PipelineStore reads each backend answers through its CoreStore; a backend's class
    adds the vector read, the write transaction and a reading connection."""

    backend: str

    def __init__(self, core: PipelineCore) -> None:
        self.core = core

    @property
    def in_write_tx(self) -> bool:
        return self.core.in_write_tx

    def get_memory(self, memory_id: str) -> Memory | None:
        return self.core.get_memory(memory_id)

    def lease(self, now: str, *, job_types: list[str]) -> Job | None:
        return self.core.lease(now, job_types=job_types)

    def review_items(
        self, status: str | None, *, limit: int, offset: int = 0
    ) -> list[ReviewItem]:
        with self.core.reading() as conn:
            return review_sql.list_items(conn, status, limit=limit, offset=offset,
                                         dialect=self.core.dialect)

    def review_id(self, ref: str) -> str:
        return self.core.resolve_id("memory_review_queue", ref, noun="review item")


class SqlitePipeline(CorePipeline):
    """PipelineStore on the SQLite Store (one writer, WAL)."""

    backend = "sqlite"

    def __init__(self, core: PipelineCore, store: Store) -> None:
        super().__init__(core)
        self.store = store

    def vector_for(self, content_hash: str, model: str) -> np.ndarray | None:
        return emb_sql.vector_for(self.store.reader(), content_hash, model)

    @contextmanager
    def write(self) -> Iterator[PipelineTx]:
        with self.store.write_tx() as conn:
            yield SqlitePipelineTx(conn)
