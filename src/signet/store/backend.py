"""The store seam: what a workspace's store hands out, with a SQLite and a PostgreSQL side.

`Backend` is the one object `SignetApp.open` asks for (store/choose.py opens it): it holds the
`CoreStore` (memories, history, search, jobs, tokens) and hands out every other seam over the same
database. Each `CoreStore` operation is one transaction returning the same values on both sides;
the contract tests (tests/store/) run one suite on both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from signet.errors import StoreError
from signet.store import embeddings as emb_sql
from signet.store import fts
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import tokens as tokens_sql
from signet.store.db import Store
from signet.store.document_store import DocumentStore
from signet.store.embeddings import VectorItem
from signet.store.feedback import Feedback
from signet.store.graph_store import GraphStore, SqliteGraph
from signet.store.idempotency import KeySpace, Recorded
from signet.store.injections import InjectionStore
from signet.store.jobs import Job, memory_ids
from signet.store.memory_ops import (
    Check,
    Edited,
    InTx,
    MemoryEdit,
    SqliteMemoryOps,
    Within,
    Written,
    check_version,
)
from signet.store.operations import OpsStore
from signet.store.pipeline import PipelineStore
from signet.store.portable import PortableStore
from signet.store.projection import ProjectionStore
from signet.store.recall_reads import NearestVectors, Ranking, RecallReads, SqliteRecallReads
from signet.store.search_telemetry import LedgerStore
from signet.store.session_store import SessionStore
from signet.store.signing_key import file_key
from signet.store.skills import SkillMemory, SkillMeta
from signet.store.tokens import TokenRow
from signet.store.vector_index import NumpyIndex
from signet.types import (
    Actor,
    HistoryEvent,
    Memory,
    MemoryFilters,
    MemoryScope,
    NewMemory,
    RememberResult,
)

__all__ = ["Backend", "CoreStore", "SqliteCore", "check_version"]


class CoreStore(Protocol):
    """The core store operations; each one is a transaction of its own."""

    backend: str

    # -- memories and history: the memory service's transactions (store/memory_ops.py) -------
    @property
    def in_write_tx(self) -> bool:
        """Whether this thread is inside a caller's write transaction (SQLite workers)."""
        ...

    def resolve_id(
        self, table: str, ref: str, *, noun: str, scope: MemoryScope | None = None
    ) -> str:
        """The one id of `table` starting with the short id `ref` (store/prefixes.py), inside
        `scope`; `ref` unchanged when it is no prefix; NotFound / ambiguous InvalidInput."""
        ...

    def write_memory(
        self, memory: NewMemory, *, storage: str, normalized: str, content_hash: str,
        actor: Actor, now: str, vector: np.ndarray | None = None, model: str | None = None,
        jobs: Sequence[str] = (), max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS,
        extraction_status: str = "none", link_entities: bool = True, key: KeySpace | None = None,
        within: Within | None = None,
    ) -> Written:
        """One remember: the answer under `key` when one is recorded (nothing written); else
        insert (or dedup within the scope) with history ('created', or 'none' for a
        duplicate), a new memory linked to the existing entities it names (the inline entity
        linker, store/graph.py; unless not `link_entities`) and its `jobs`, the
        vector unless the hash has a current one of `model` (an `embed` job when there is no
        vector), then `within(graph statements, id)` (a graph payload sent with the memory:
        both commit or neither), and the answer recorded under `key`."""
        ...

    def insert_memory(self, memory: NewMemory, **kwargs: Any) -> tuple[str, bool]:
        """`write_memory` (no key) answering (id, deduped)."""
        ...

    def idempotent(self, key: KeySpace) -> Recorded | None:
        """The answer recorded under an idempotency key, if any."""
        ...

    def get_memory(self, memory_id: str, scope: MemoryScope | None = None) -> Memory | None:
        """The memory, or None when it does not exist or lies outside `scope`."""
        ...

    def get_memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids (deleted ones too; unknown ids left out)."""
        ...

    def list_memories(
        self, filters: MemoryFilters, *, limit: int, offset: int
    ) -> tuple[list[Memory], int]: ...

    def update_memory(self, memory_id: str, edit: MemoryEdit) -> Edited | None:
        """Apply `edit` (version + 1) with an 'updated' history row; None when the memory is
        unknown or out of scope. Conflict when the version check fails or the new content (or
        project) meets the same content live in that scope. New content gets its vector (or
        an embed job), its entity links redone, its hints cleared and its jobs enqueued."""
        ...

    def forget(
        self, memory_id: str, *, actor: Actor, now: str, reason: str | None = None,
        scope: MemoryScope | None = None, check: Check | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Memory | None:
        """Soft delete with a 'deleted' history row (a deleted memory is returned as is)."""
        ...

    def recover(
        self, memory_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None,
        reason: str | None = None, check: Check | None = None,
    ) -> Memory | None:
        """Undo a soft delete; Conflict when the same content is live again in its scope."""
        ...

    def add_feedback(
        self, memory_id: str, *, feedback_type: str, correction_text: str | None,
        session_id: str | None, actor: str | None, agent_id: str, now: str,
        scope: MemoryScope | None = None, used: bool = False, in_tx: InTx | None = None,
    ) -> Feedback | None:
        """A verdict on a memory (None: unknown or out of scope); `used` counts an access and
        a use of the skill it indexes; `in_tx` runs in the same transaction."""
        ...

    def feedback_for(self, memory_id: str) -> list[Feedback]: ...

    def add_accesses(self, rows: Sequence[tuple[str, int, str]]) -> None:
        """(memory id, accesses, latest time): counts added, the latest time kept."""
        ...

    def match_all(self, text: str, filters: MemoryFilters, limit: int) -> list[str]:
        """Ids of memories holding every word of `text`, oldest first (batch forget)."""
        ...

    def mark_stale_except(self, model: str, dimensions: int) -> int:
        """Mark every vector of another model or width stale; how many were marked."""
        ...

    # -- skills (signet/skills.py: skill_meta and the memory indexing each skill) ------------
    def skill_metas(self, agent_id: str) -> list[SkillMeta]: ...

    def skill_memory(self, name: str, agent_id: str) -> SkillMemory | None: ...

    def upsert_skill_meta(
        self, *, name: str, agent_id: str, path: str, role: str | None, decay_rate: float,
        now: str,
    ) -> None: ...

    def delete_skill_meta(self, name: str, agent_id: str) -> bool: ...

    def set_importances(self, moves: Sequence[tuple[str, float]]) -> None: ...

    def history(self, memory_id: str) -> list[HistoryEvent]: ...

    # -- search -----------------------------------------------------------------------------
    def lexical_search(
        self, text: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        """(memory id, score) over content and tags, best first; higher is better."""
        ...

    def vector_search(
        self, query: np.ndarray, *, model: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        """(memory id, cosine similarity) of live memories with a current vector, best first."""
        ...

    def has_vector(self, content_hash: str, model: str) -> bool:
        """Whether `content_hash` has a current (not stale) vector of `model`."""
        ...

    def store_vectors(
        self, items: Sequence[VectorItem], *, model: str, now: str, done: Sequence[Job] = ()
    ) -> int:
        """Store each item whose hash has no current vector of `model`, and complete each job
        of `done` still under its lease (its result: the model, recorded as its memory's
        embedding model), in one transaction; returns how many vectors were stored."""
        ...

    def missing_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        """(content hash, content) of live memories with no current vector of `model`."""
        ...

    # -- jobs -------------------------------------------------------------------------------
    def enqueue(
        self, job_type: str, *, now: str, memory_id: str | None = None,
        document_id: str | None = None, payload: dict[str, Any] | None = None,
        max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS,
    ) -> str | None: ...

    def lease(self, now: str, *, job_types: Sequence[str] | None = None) -> Job | None: ...

    def lease_many(self, now: str, job_type: str, limit: int) -> list[Job]:
        """Up to `limit` pending jobs of one type, oldest first."""
        ...

    def fail_leased(self, failures: Sequence[tuple[Job, int]], error: str, now: str) -> None:
        """Fail each (job, retry delay in ms) still under its lease, in one transaction."""
        ...

    def complete(self, job_id: str, now: str, result: dict[str, Any] | None = None) -> bool: ...

    def fail(self, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0) -> str: ...

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int: ...

    def held_leases(self) -> list[tuple[str, str]]:
        """(job id, leased_at) of the jobs this process leased lately, for a clean shutdown
        to hand back those still at that lease (PostgreSQL: the queue is shared)."""
        ...

    def get_job(self, job_id: str) -> Job | None: ...

    # -- tokens -----------------------------------------------------------------------------
    def insert_token(self, row: TokenRow) -> None: ...

    def get_token(self, token_id: str) -> TokenRow | None: ...

    def revoke_token(self, token_id: str, now: str) -> bool: ...

    def touch_token(self, token_id: str, now: str) -> None: ...

    def list_tokens(self, *, include_revoked: bool = True) -> list[TokenRow]:
        """Every API token (login codes left out), oldest first."""
        ...

    def add_login_code(self, row: TokenRow, now: str) -> None:
        """Store a login code, purging spent and expired ones in the same transaction."""
        ...

    def consume_login_code(self, key_hash: str, now: str) -> TokenRow | None:
        """The live login code with this hash, revoked by this call: it works exactly once."""
        ...

    def signing_key(self) -> bytes:
        """The secret that signs API tokens, created on first use, the same for every process
        that opens this store."""
        ...

    def graph(self) -> GraphStore:
        """The knowledge graph's statements on this store (store/graph_store.py)."""
        ...

    def recall_reads(self, model: str | None) -> RecallReads:
        """What the Recaller (recall/hybrid.py) reads on this store; `model`: the embedder's,
        whose vectors the semantic channel searches (None: no semantic channel)."""
        ...

    def size_bytes(self) -> int:
        """The store's size on disk (the database file with its WAL; the PostgreSQL database)."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    """One opened store: its `CoreStore` and every other seam over the same database."""

    name: str
    # Whether recall keeps the vectors in process memory (recall/vectors.py) rather than
    # searching them in the database.
    local_vectors: bool

    @property
    def core(self) -> CoreStore:
        """Memories, search, the job queue and tokens (each operation a transaction)."""
        ...

    def graph(self) -> GraphStore: ...

    def recall_reads(self, model: str | None, vectors: NearestVectors | None) -> RecallReads:
        """Recall's reads; `vectors`: the in-process index when `local_vectors`."""
        ...

    def sessions(self) -> SessionStore: ...

    def documents(self, write_chunk: Callable[[Any], RememberResult]) -> DocumentStore: ...

    def pipeline(self) -> PipelineStore: ...

    def operations(self) -> OpsStore: ...

    def ledger(self) -> LedgerStore: ...

    def portable(self) -> PortableStore: ...

    def projection(self) -> ProjectionStore: ...

    def injections(self) -> InjectionStore: ...

    def sqlite_store(self) -> Store:
        """The workspace's SQLite file (backup, file-level benchmarks); NotOnBackend when the
        store is not one."""
        ...

    def database(self) -> str:
        """Where the data lives, for status: the file's path, or the URL without password."""
        ...

    def file(self) -> Path | None:
        """The workspace's database file, or None for a shared database (no file to copy)."""
        ...

    def size_bytes(self) -> int:
        """The data's size: the file after a checkpoint (the WAL folded back), or the database's
        own (tables, indexes, TOAST; not the server's WAL)."""
        ...

    def batch_key(self) -> bytes:
        """The key that signs batch-forget confirm tokens."""
        ...

    def release_leases(self, ops: OpsStore, now: str) -> int:
        """At shutdown, after the workers stopped: hand back the jobs this process leased."""
        ...

    def checkpoint(self) -> None: ...

    def close(self) -> None: ...


class SqliteCore(SqliteMemoryOps):
    """CoreStore on the SQLite store: the store/ functions."""

    backend = "sqlite"

    def __init__(self, store: Store, key_path: Path | None = None) -> None:
        self.store = store
        self.key_path = key_path
        self._vectors: tuple[tuple[str, int, tuple[int, int]], NumpyIndex] | None = None

    # -- memories and history (the memory service's transactions: store/memory_ops.py) ----
    def get_memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        return mem_sql.get_many(self.store.reader(), list(ids))

    def list_memories(
        self, filters: MemoryFilters, *, limit: int, offset: int
    ) -> tuple[list[Memory], int]:
        return mem_sql.list_page(self.store.reader(), filters, limit=limit, offset=offset)

    def history(self, memory_id: str) -> list[HistoryEvent]:
        return history_sql.for_memory(self.store.reader(), memory_id)

    # -- search -----------------------------------------------------------------------------
    def lexical_search(
        self, text: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        return fts.search(self.store.reader(), text, filters, limit)

    def has_vector(self, content_hash: str, model: str) -> bool:
        return emb_sql.has_current(self.store.reader(), content_hash, model)

    def store_vectors(
        self, items: Sequence[VectorItem], *, model: str, now: str, done: Sequence[Job] = ()
    ) -> int:
        stored = 0
        with self.store.write_tx() as conn:
            for content_hash, vector, memory_id in items:
                if not emb_sql.has_current(conn, content_hash, model):
                    emb_sql.upsert(conn, content_hash, vector, model=model, now=now,
                                   source_id=memory_id)
                    stored += 1
            mem_sql.set_embedding_model(conn, memory_ids(done), model)
            for job in done:
                if jobs_sql.owns(conn, job):
                    jobs_sql.complete(conn, job.id, now, {"model": model})
        return stored

    def missing_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        return emb_sql.missing(self.store.reader(), model, limit)

    def vector_search(
        self, query: np.ndarray, *, model: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        """Exact, over an in-RAM index of every current vector of `model`. The index is
        rebuilt whenever the table's change marker (max id, row count) moves, checked on every
        search, so another process's writes are seen (recall/vectors.py keeps its own,
        incrementally synced index; this one is the contract's reference)."""
        if limit <= 0:
            return []
        conn = self.store.reader()
        dimensions = int(np.asarray(query).shape[-1])
        index = self._vector_index(conn, model, dimensions)
        if not len(index):
            return []
        want = max(limit * 4, 40)
        while True:
            hits = index.search(np.asarray(query, dtype=np.float32), want)
            owners = emb_sql.memory_ids_for(conn, [e for e, _ in hits])
            allowed = mem_sql.allowed_ids(conn, [m for ms in owners.values() for m in ms], filters)
            found = [(m, score) for e, score in hits
                     for m in sorted(owners.get(e, [])) if m in allowed]
            if len(found) >= limit or len(hits) < want:
                return found[:limit]
            want *= 4  # the filters dropped too many: widen the exact scan

    def _vector_index(self, conn: Any, model: str, dimensions: int) -> NumpyIndex:
        marker = (model, dimensions, emb_sql.change_marker(conn))
        cached = self._vectors
        if cached is not None and cached[0] == marker:
            return cached[1]
        index = NumpyIndex(dimensions)
        after = 0
        while True:
            ids, matrix = emb_sql.load_since(conn, model, dimensions, after)
            if not ids:
                break
            index.add(ids, matrix)
            after = ids[-1]
        self._vectors = (marker, index)
        return index

    # -- jobs -------------------------------------------------------------------------------
    def enqueue(
        self, job_type: str, *, now: str, memory_id: str | None = None,
        document_id: str | None = None, payload: dict[str, Any] | None = None,
        max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS,
    ) -> str | None:
        with self.store.write_tx() as conn:
            return jobs_sql.enqueue(conn, job_type, memory_id=memory_id, document_id=document_id,
                                    payload=payload, max_attempts=max_attempts, now=now)

    def lease(self, now: str, *, job_types: Sequence[str] | None = None) -> Job | None:
        # An idle worker reads instead of queueing for the one writer (store/jobs.py).
        if not jobs_sql.claimable(self.store.reader(), now, job_types=job_types):
            return None
        with self.store.write_tx() as conn:
            return jobs_sql.lease(conn, now, job_types=job_types)

    def complete(self, job_id: str, now: str, result: dict[str, Any] | None = None) -> bool:
        with self.store.write_tx() as conn:
            return jobs_sql.complete(conn, job_id, now, result)

    def lease_many(self, now: str, job_type: str, limit: int) -> list[Job]:
        if not jobs_sql.claimable(self.store.reader(), now, job_types=[job_type]):
            return []
        with self.store.write_tx() as conn:
            return jobs_sql.lease_many(conn, now, job_type, limit)

    def fail_leased(self, failures: Sequence[tuple[Job, int]], error: str, now: str) -> None:
        with self.store.write_tx() as conn:
            for job, delay in failures:
                if jobs_sql.owns(conn, job):
                    jobs_sql.fail(conn, job.id, error, now, retry_delay_ms=delay)

    def fail(self, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0) -> str:
        with self.store.write_tx() as conn:
            return jobs_sql.fail(conn, job_id, error, now, retry_delay_ms=retry_delay_ms)

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int:
        with self.store.write_tx() as conn:
            return jobs_sql.reap_stale_leases(conn, now, lease_timeout_ms)

    def held_leases(self) -> list[tuple[str, str]]:
        return []  # one daemon owns the file: its shutdown releases every lease (app.py)

    def get_job(self, job_id: str) -> Job | None:
        return jobs_sql.get(self.store.reader(), job_id)

    # -- tokens -----------------------------------------------------------------------------
    def insert_token(self, row: TokenRow) -> None:
        with self.store.write_tx() as conn:
            tokens_sql.insert(conn, row)

    def get_token(self, token_id: str) -> TokenRow | None:
        return tokens_sql.get(self.store.reader(), token_id)

    def revoke_token(self, token_id: str, now: str) -> bool:
        with self.store.write_tx() as conn:
            return tokens_sql.revoke(conn, token_id, now)

    def touch_token(self, token_id: str, now: str) -> None:
        with self.store.write_tx() as conn:
            tokens_sql.touch(conn, token_id, now)

    def list_tokens(self, *, include_revoked: bool = True) -> list[TokenRow]:
        return tokens_sql.list_tokens(self.store.reader(), include_revoked=include_revoked)

    def add_login_code(self, row: TokenRow, now: str) -> None:
        with self.store.write_tx() as conn:
            tokens_sql.purge_login_codes(conn, now)
            tokens_sql.insert(conn, row)

    def consume_login_code(self, key_hash: str, now: str) -> TokenRow | None:
        with self.store.write_tx() as conn:
            return tokens_sql.consume_login_code(conn, key_hash, now)

    def signing_key(self) -> bytes:
        if self.key_path is None:
            raise StoreError("this store was opened without its signing-key file")
        return file_key(self.key_path)

    def graph(self) -> GraphStore:
        return SqliteGraph(self.store)

    def recall_reads(self, model: str | None) -> RecallReads:
        # The SQLite app builds its reads with the RAM vector index (app.py); this exact scan
        # is the seam's own (`vector_search`).
        return SqliteRecallReads(self.store, _SeamVectors(self, model) if model else None)

    def size_bytes(self) -> int:
        self.store.checkpoint()
        return sum(p.stat().st_size for p in self.store.path.parent.glob(self.store.path.name + "*"))

    def close(self) -> None:
        self.store.close()


class _SeamVectors:
    """`vector_search` as the recall reads' vector index (store/recall_reads.NearestVectors)."""

    def __init__(self, core: SqliteCore, model: str) -> None:
        self.core = core
        self.model = model

    def nearest(
        self, conn: Any, vector: np.ndarray, filters: MemoryFilters, limit: int,
        min_cosine: float,
    ) -> Ranking:
        found = self.core.vector_search(vector, model=self.model, filters=filters, limit=limit)
        return [(m, s) for m, s in found if s >= min_cosine]
