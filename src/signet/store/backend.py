"""The store seam: the core operations as one interface, with a SQLite and a PostgreSQL side.

`CoreStore` names what a team deployment needs shared between daemons: memories with their
history, lexical and vector search, the job queue with leases, API tokens and the secret that
signs them. Each operation is one transaction on the backend (callers pass `now`, so tests and
the reaper can move the clock); results are the same values (`Memory`, `Job`, `TokenRow`) on
both sides, and the contract tests (tests/store/test_core_contract.py) run one suite on both.

- `SqliteCore` wraps today's functions in store/ unchanged on a `Store` (one writer, WAL).
- `PgCore` (store/postgres/core.py) is the same contract on psycopg 3 and a connection pool.

What is not on PostgreSQL yet (NOT_PORTED: documents, telemetry, the
cold tier, retention, ...) is refused by name, per feature: the daemon on postgres serves the
core memory API over this seam (signet/core_app.py), and every operation that needs a feature
not here raises `NotOnBackend` (HTTP 501, `not_on_backend`), never an answer silently missing
something.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from signet.config import StoreConfig
from signet.errors import ConfigError, Conflict, NotOnBackend, StoreError
from signet.store import embeddings as emb_sql
from signet.store import fts
from signet.store import graph as graph_sql
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import scope as scope_sql
from signet.store import tokens as tokens_sql
from signet.store.db import Store
from signet.store.graph_store import GraphOps, GraphStore, SqliteGraph, SqliteGraphOps
from signet.store.jobs import Job
from signet.store.signing_key import file_key
from signet.store.tokens import TokenRow
from signet.store.vector_index import NumpyIndex
from signet.types import Actor, HistoryEvent, Memory, MemoryFilters, MemoryScope, NewMemory

__all__ = ["NOT_PORTED", "PORTED", "CoreStore", "NotOnBackend", "SqliteCore", "open_core"]

# What runs on PostgreSQL today, and what does not (named in every refusal).
PORTED = (
    "memories + history", "lexical search", "vector search", "jobs with leases",
    "tokens + signing key", "core recall (lexical + vector, fused)", "embed worker",
    "sessions and transcripts", "pipeline extraction and hints", "hint search", "batch remember",
    "documents and connectors", "search ledger",
    "portable export and import", "projection",
    "review queue",
    "knowledge graph (store/graph_store.py: entities, pins, communities, graph channels)",
    "job listing", "pipeline status", "maintenance and repair", "cold tier and retention",
)
NOT_PORTED = (
    "telemetry", "skills",
    "feedback", "idempotency keys", "short id prefixes",
    "access counts",
    "batch forget and modify",
)


# Work run inside an insert's transaction with the graph's statements and the memory's id.
Within = Callable[[GraphOps, str], object]


class CoreStore(Protocol):
    """The core store operations; each one is a transaction of its own."""

    backend: str

    # -- memories and history ---------------------------------------------------------------
    def insert_memory(
        self, memory: NewMemory, *, storage: str, normalized: str, content_hash: str,
        actor: Actor, now: str, vector: np.ndarray | None = None, model: str | None = None,
        jobs: Sequence[str] = (), extraction_status: str = "none",
        within: Within | None = None,
    ) -> tuple[str, bool]:
        """Insert (or dedup within the scope), write history ('created', or 'none' for a
        duplicate), link a new memory to the existing entities it names (the inline entity
        linker, store/graph.py), store the vector unless the hash has a current one, enqueue
        `jobs` for a new memory (`extraction_status` 'pending' when one is `extract`); then
        `within(graph statements, id)` in the same transaction (a graph payload sent with the
        memory: both commit or neither). Returns (id, deduped)."""
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

    def update_memory(
        self, memory_id: str, columns: dict[str, Any], *, actor: Actor, now: str,
        reason: str | None = None, scope: MemoryScope | None = None,
        expected_version: int | None = None,
    ) -> Memory | None:
        """Apply column changes (version + 1) with an 'updated' history row (new content is
        re-linked to the entities it names); None when the memory is unknown or out of scope. Conflict when `expected_version` is given and the
        row is at another, or when the new content (or project) meets the same content live
        in that scope."""
        ...

    def forget(
        self, memory_id: str, *, actor: Actor, now: str, reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory | None:
        """Soft delete with a 'deleted' history row (a deleted memory is returned as is)."""
        ...

    def recover(
        self, memory_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None,
        reason: str | None = None,
    ) -> Memory | None:
        """Undo a soft delete; Conflict when the same content is live again in its scope."""
        ...

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
        self, items: Sequence[tuple[str, np.ndarray, str | None]], *, model: str, now: str
    ) -> int:
        """Store (content hash, vector, source memory id) for each hash without a current
        vector of `model`, in one transaction; returns how many were stored."""
        ...

    # -- jobs -------------------------------------------------------------------------------
    def enqueue(
        self, job_type: str, *, now: str, memory_id: str | None = None,
        document_id: str | None = None, payload: dict[str, Any] | None = None,
        max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS,
    ) -> str | None: ...

    def lease(self, now: str, *, job_types: Sequence[str] | None = None) -> Job | None: ...

    def complete(self, job_id: str, now: str, result: dict[str, Any] | None = None) -> bool: ...

    def fail(self, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0) -> str: ...

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int: ...

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

    def size_bytes(self) -> int:
        """The store's size on disk (the database file with its WAL; the PostgreSQL database)."""
        ...

    def close(self) -> None: ...


def open_core(config: StoreConfig, *, sqlite_path: Path, key_path: Path) -> CoreStore:
    """The configured backend's CoreStore. `sqlite_path` and `key_path` are the workspace's
    database and signing-key file, used by the sqlite backend only."""
    if config.backend == "sqlite":
        return SqliteCore(Store.open(sqlite_path), key_path)
    if not config.url:
        raise ConfigError("store.backend postgres needs store.url or SIGNET_STORE_URL")
    try:
        from signet.store.postgres.core import PgCore
    except ImportError as exc:  # the optional extra is not installed
        raise ConfigError(
            "store.backend postgres needs the postgres extra: pip install 'signet-memory[postgres]'"
            f" ({exc})"
        ) from exc
    return PgCore.open(config.url)


def check_version(current: Memory, expected: int | None) -> None:
    """Conflict when the caller edits a version it did not read (optimistic concurrency)."""
    if expected is not None and current.version != expected:
        raise Conflict(f"memory {current.id} is at version {current.version}, not {expected}")


class SqliteCore:
    """CoreStore on today's SQLite store: the existing store/ functions, unchanged."""

    backend = "sqlite"

    def __init__(self, store: Store, key_path: Path | None = None) -> None:
        self.store = store
        self.key_path = key_path
        self._vectors: tuple[tuple[str, int, tuple[int, int]], NumpyIndex] | None = None

    # -- memories and history ---------------------------------------------------------------
    def insert_memory(
        self, memory: NewMemory, *, storage: str, normalized: str, content_hash: str,
        actor: Actor, now: str, vector: np.ndarray | None = None, model: str | None = None,
        jobs: Sequence[str] = (), extraction_status: str = "none",
        within: Within | None = None,
    ) -> tuple[str, bool]:
        with self.store.write_tx() as conn:
            has_vector = model is not None and emb_sql.has_current(conn, content_hash, model)
            memory_id, deduped = mem_sql.insert(
                conn, memory, storage=storage, normalized=normalized, content_hash=content_hash,
                now=now, embedding_model=model if (vector is not None or has_vector) else None,
                extraction_status=extraction_status,
            )
            if deduped:
                history_sql.record(
                    conn, memory_id, "none", actor, now, new_content=storage,
                    reason="duplicate content", metadata={"dedupedExistingId": memory_id},
                )
                if within is not None:
                    within(SqliteGraphOps(conn), memory_id)
                return memory_id, True
            history_sql.record(conn, memory_id, "created", actor, now, new_content=storage)
            graph_sql.link_known_entities(conn, memory_id, memory.agent_id, storage, now)
            if vector is not None and model is not None and not has_vector:
                emb_sql.upsert(conn, content_hash, vector, model=model, now=now,
                               source_id=memory_id)
            for job_type in jobs:
                jobs_sql.enqueue(conn, job_type, memory_id=memory_id, now=now)
            if within is not None:
                within(SqliteGraphOps(conn), memory_id)
        return memory_id, False

    def get_memory(self, memory_id: str, scope: MemoryScope | None = None) -> Memory | None:
        conn = self.store.reader()
        if scope is not None and not scope_sql.contains(conn, memory_id, scope):
            return None
        return mem_sql.get(conn, memory_id)

    def get_memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        return mem_sql.get_many(self.store.reader(), list(ids))

    def list_memories(
        self, filters: MemoryFilters, *, limit: int, offset: int
    ) -> tuple[list[Memory], int]:
        return mem_sql.list_page(self.store.reader(), filters, limit=limit, offset=offset)

    def update_memory(
        self, memory_id: str, columns: dict[str, Any], *, actor: Actor, now: str,
        reason: str | None = None, scope: MemoryScope | None = None,
        expected_version: int | None = None,
    ) -> Memory | None:
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None:
                return None
            check_version(current, expected_version)
            if "content_hash" in columns or "project" in columns:
                other = mem_sql.find_live_by_hash(
                    conn, columns.get("content_hash", current.content_hash) or "",
                    current.agent_id, columns.get("project", current.project),
                )
                if other and other != memory_id:
                    raise Conflict(f"memory {other} already holds this content")
            mem_sql.update(conn, memory_id, columns, now)
            history_sql.record(
                conn, memory_id, "updated", actor, now, old_content=current.content,
                new_content=columns.get("content", current.content), reason=reason,
                metadata={"changed": sorted(columns)},
            )
            if "content" in columns:  # new text may name other entities
                graph_sql.unlink_memory(conn, memory_id)
                graph_sql.link_known_entities(conn, memory_id, current.agent_id,
                                              columns["content"], now)
            return mem_sql.get(conn, memory_id)

    def forget(
        self, memory_id: str, *, actor: Actor, now: str, reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory | None:
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None or current.is_deleted:
                return current
            mem_sql.soft_delete(conn, memory_id, now)
            history_sql.record(conn, memory_id, "deleted", actor, now,
                               old_content=current.content, reason=reason)
            return mem_sql.get(conn, memory_id)

    def recover(
        self, memory_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None,
        reason: str | None = None,
    ) -> Memory | None:
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None or not current.is_deleted:
                return current
            other = mem_sql.find_live_by_hash(
                conn, current.content_hash or "", current.agent_id, current.project
            )
            if other:
                raise Conflict(f"memory {other} already holds this content")
            mem_sql.recover(conn, memory_id, now)
            history_sql.record(conn, memory_id, "recovered", actor, now,
                               new_content=current.content, reason=reason)
            return mem_sql.get(conn, memory_id)

    def _visible(self, conn: Any, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        if scope is not None and not scope_sql.contains(conn, memory_id, scope):
            return None
        return mem_sql.get(conn, memory_id)

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
        self, items: Sequence[tuple[str, np.ndarray, str | None]], *, model: str, now: str
    ) -> int:
        stored = 0
        with self.store.write_tx() as conn:
            for content_hash, vector, memory_id in items:
                if not emb_sql.has_current(conn, content_hash, model):
                    emb_sql.upsert(conn, content_hash, vector, model=model, now=now,
                                   source_id=memory_id)
                    stored += 1
        return stored

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
        with self.store.write_tx() as conn:
            return jobs_sql.lease(conn, now, job_types=job_types)

    def complete(self, job_id: str, now: str, result: dict[str, Any] | None = None) -> bool:
        with self.store.write_tx() as conn:
            return jobs_sql.complete(conn, job_id, now, result)

    def fail(self, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0) -> str:
        with self.store.write_tx() as conn:
            return jobs_sql.fail(conn, job_id, error, now, retry_delay_ms=retry_delay_ms)

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int:
        with self.store.write_tx() as conn:
            return jobs_sql.reap_stale_leases(conn, now, lease_timeout_ms)

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

    def size_bytes(self) -> int:
        self.store.checkpoint()
        return sum(p.stat().st_size for p in self.store.path.parent.glob(self.store.path.name + "*"))

    def close(self) -> None:
        self.store.close()
