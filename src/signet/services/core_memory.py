"""The memory service over the store seam (store/backend.py `CoreStore`): the PostgreSQL path.

The same rules as services/memory.py, which it reuses rather than restates: input is validated
and normalised by services/memory_input.py, a scoped caller is confined by services/scope.py,
mutations stop when the pipeline is frozen, a pinned memory is forgotten only with `force`,
recovery only within the tombstone window. Each write is one CoreStore transaction: insert with
dedup per scope + history + the `embed` job (so another daemon's worker may take it), or the
update with its version check, or the soft delete, or the recovery.

A graph payload sent with a memory is applied by the knowledge graph (graph/service.py, over
the PostgreSQL graph store) inside the insert's own transaction, so both commit or neither, as
on SQLite; the inline entity linker runs in that transaction too (store/backend.py
`insert_memory`). The community filter is resolved by the graph as on SQLite. What the seam
does not carry yet is refused by name (`NotOnBackend`, HTTP 501): an idempotency key,
feedback. Ids are taken whole (no short prefixes on this backend). A new memory gets its
pipeline jobs (extract, hints) in its insert transaction, by the same rules as on SQLite
(services/write_policy.py); new content from `modify` loses its old hints and is extracted and
hinted again. The pipeline's workers write through `prepare_memory(ies)` + `write_prepared`:
inside a worker's write transaction (PgCore.transaction) the insert joins it. With
`embedding.write_path: inline` a local embedder embeds before the transaction, as on SQLite;
else the embed worker does.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from signet.clock import Clock, stamp
from signet.config import Config
from signet.errors import Conflict, Forbidden, Frozen, InvalidInput, NotFound, ProviderError
from signet.graph.apply import parse_payload
from signet.graph.service import KnowledgeGraph
from signet.normalize import normalize_content
from signet.pipeline.writes import PreparedMemory
from signet.providers.embedder import Embedder
from signet.services.memory_input import changed_columns, check_modifiable, check_text, new_memory
from signet.services.scope import scoped_filters, scoped_write
from signet.services.write_policy import embed_missing, extracts, pipeline_on
from signet.store.backend import CoreStore, NotOnBackend, Within
from signet.store.graph_store import GraphOps
from signet.types import (
    Actor,
    HistoryEvent,
    Memory,
    MemoryFilters,
    MemoryScope,
    Page,
    RememberResult,
    parse_ts,
)

__all__ = ["CoreMemoryService"]

log = logging.getLogger(__name__)


@dataclass
class CoreMemoryService:
    config: Config
    core: CoreStore
    embedder: Embedder | None
    clock: Clock
    graph: KnowledgeGraph
    # Called after a write committed a memory without its vector (wakes the embed worker).
    on_deferred: Callable[[], None] | None = None

    @property
    def backend(self) -> str:
        return self.core.backend

    # -- remember ---------------------------------------------------------------------------

    def remember(
        self, content: str, *, actor: Actor = Actor(), embed_inline: bool | None = None,
        idempotency_key: str | None = None, graph: Any = None,
        scope: MemoryScope | None = None, **fields: Any,
    ) -> RememberResult:
        self.check_mutable()
        if idempotency_key is not None:
            raise NotOnBackend("idempotency keys", self.backend)
        check_text({"content": content, "graph": graph, **fields})
        if scope is not None:
            actor, fields = scoped_write(scope, actor, fields)
        payload = parse_payload(graph) if graph is not None else None
        memory = new_memory(content, actor, fields, self.config.memory)
        norm = normalize_content(memory.content)
        vector = self._embed_for_write(norm.storage, norm.content_hash, embed_inline)
        within = None
        if payload is not None and not payload.is_empty():
            def within(ops: GraphOps, memory_id: str) -> object:
                return self.graph.apply(payload, memory_id=memory_id, actor=actor, graph=ops)
        return self._insert(PreparedMemory(memory, norm, vector, actor), within)

    def remember_many(
        self, items: Sequence[dict[str, Any]], *, actor: Actor = Actor()
    ) -> builtins.list[RememberResult]:
        """Several memories: one batched embedding call, then each through `write_prepared`."""
        return [self.write_prepared(p) for p in self.prepare_memories(items, actor=actor)]

    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> builtins.list[PreparedMemory]:
        """First half of `remember` for many memories (services/memory.py's contract)."""
        self.check_mutable()
        memories = [
            new_memory(item["content"], actor, {k: v for k, v in item.items() if k != "content"},
                       self.config.memory, prefixes=prefixes)
            for item in items
        ]
        norms = [normalize_content(m.content) for m in memories]
        vectors: builtins.list[np.ndarray | None] = [None] * len(norms)
        if self.embedder is not None and self._inline():
            model = self.embedder.model
            vectors = embed_missing(
                self.embedder, [n.storage for n in norms], [n.content_hash for n in norms],
                lambda h: self.core.has_vector(h, model),
            )
        return [PreparedMemory(m, n, v, actor)
                for m, n, v in zip(memories, norms, vectors, strict=True)]

    def prepare_memory(self, content: str, *, actor: Actor, **fields: Any) -> PreparedMemory:
        """First half of `remember` for the pipeline: validate, normalise, embed (no tx open)."""
        memory = new_memory(content, actor, fields, self.config.memory)
        norm = normalize_content(memory.content)
        vector = self._embed_for_write(norm.storage, norm.content_hash, None)
        return PreparedMemory(memory, norm, vector, actor)

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult:
        """Second half of `remember`: one insert transaction, or a savepoint of the caller's
        (a pipeline worker's `PgCore.transaction`)."""
        return self._insert(prepared)

    def _insert(
        self, prepared: PreparedMemory, within: Within | None = None
    ) -> RememberResult:
        memory, norm, vector = prepared.memory, prepared.norm, prepared.vector
        model = self.embedder.model if self.embedder is not None else None
        embedded = vector is not None or (
            model is not None and self.core.has_vector(norm.content_hash, model)
        )
        jobs = ["embed"] if model is not None and not embedded else []
        pipeline = self.config.pipeline
        extract = extracts(pipeline, memory)
        if extract:
            jobs.append("extract")
        if pipeline_on(pipeline) and pipeline.hints.enabled:
            jobs.append("hints")
        memory_id, deduped = self.core.insert_memory(
            memory, storage=norm.storage, normalized=norm.normalized,
            content_hash=norm.content_hash, actor=prepared.actor, now=stamp(self.clock),
            vector=vector, model=model, jobs=jobs,
            extraction_status="pending" if extract else "none",
            within=within,
        )
        stored = self.core.get_memory(memory_id)
        assert stored is not None
        if jobs:
            self._wake()
        return RememberResult(memory_id, deduped, stored, embedded=embedded)

    def _inline(self) -> bool:
        return (self.embedder is not None and self.embedder.inline
                and self.config.embedding.write_path == "inline")

    def _embed_for_write(
        self, text: str, content_hash: str, embed_inline: bool | None
    ) -> np.ndarray | None:
        if self.embedder is None:
            return None
        inline = (self.embedder.inline and self.config.embedding.write_path == "inline"
                  if embed_inline is None else embed_inline)
        if not inline or self.core.has_vector(content_hash, self.embedder.model):
            return None
        try:
            return self.embedder.embed([text])[0]
        except ProviderError as exc:
            log.warning("inline embedding failed, deferring to the embed worker: %s", exc)
            return None

    def _wake(self) -> None:
        if self.on_deferred is not None:
            self.on_deferred()

    # -- read -------------------------------------------------------------------------------

    def get(
        self, memory_id: str, *, scope: MemoryScope | None = None, access: bool = False
    ) -> Memory:
        """The memory, scope checked in the statement that reads it (a memory outside the
        caller's scope is not found, as an unknown one). Accesses are not counted on this
        backend (module doc)."""
        memory = self.core.get_memory(memory_id, scope)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory

    def list(
        self, filters: MemoryFilters = MemoryFilters(), *, limit: int = 50, offset: int = 0,
        scope: MemoryScope | None = None,
    ) -> Page:
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit must be between 1 and 1000")
        if offset < 0:
            raise InvalidInput("offset must not be negative")
        items, total = self.core.list_memories(
            self.community_resolved(scoped_filters(filters, scope)), limit=limit, offset=offset
        )
        return Page(tuple(items), total, limit, offset)

    def history(
        self, memory_id: str, *, scope: MemoryScope | None = None
    ) -> builtins.list[HistoryEvent]:
        return self.core.history(self.get(memory_id, scope=scope).id)

    # -- modify, forget, recover ------------------------------------------------------------

    def modify(
        self, memory_id: str, changes: dict[str, Any], *, actor: Actor = Actor(),
        expected_version: int | None = None, reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()
        check_modifiable(changes)
        current = self.get(memory_id, scope=scope)
        if current.is_deleted:
            raise Conflict(f"memory {memory_id} is deleted; recover it first")
        if (scope is not None and scope.project is not None
                and changes.get("project", scope.project) != scope.project):
            raise Forbidden(f"this token may not move memories out of project {scope.project}")
        columns, norm = changed_columns(current, changes, self.config.memory)
        pipeline = self.config.pipeline
        extract = norm is not None and pipeline_on(pipeline) and current.source_type != "pipeline"
        if norm is not None:  # the old text's hints would find it wrongly (as on SQLite)
            columns = {**columns, "hints": ""}
        if extract:
            columns["extraction_status"] = "pending"
        updated = self.core.update_memory(
            memory_id, columns, actor=actor, now=stamp(self.clock), reason=reason, scope=scope,
            expected_version=expected_version,
        )
        if updated is None:
            raise NotFound(f"memory {memory_id} not found")
        if norm is not None:
            self._vector_for(updated)
            again = (["extract"] if extract else []) + (
                ["hints"] if pipeline_on(pipeline) and pipeline.hints.enabled else [])
            for job_type in again:  # new content: extracted and hinted again
                self.core.enqueue(job_type, memory_id=updated.id, now=stamp(self.clock),
                                  max_attempts=pipeline.max_attempts)
            if again:
                self._wake()
        return updated

    def _vector_for(self, memory: Memory) -> None:
        """New content: embedded now (inline) or by the embed worker (a job, visible to every
        daemon's worker)."""
        if self.embedder is None or not memory.content_hash:
            return
        vector = self._embed_for_write(memory.content, memory.content_hash, None)
        now = stamp(self.clock)
        if vector is not None:
            self.core.store_vectors([(memory.content_hash, vector, memory.id)],
                                    model=self.embedder.model, now=now)
        elif not self.core.has_vector(memory.content_hash, self.embedder.model):
            self.core.enqueue("embed", memory_id=memory.id, now=now,
                              max_attempts=self.config.pipeline.max_attempts)
            self._wake()

    def forget(
        self, memory_id: str, *, actor: Actor = Actor(), force: bool = False,
        reason: str | None = None, scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()
        current = self.get(memory_id, scope=scope)
        if current.is_deleted:
            return current
        if current.pinned and not force:
            raise Conflict(f"memory {current.id} is pinned; pass force to forget it")
        forgotten = self.core.forget(
            memory_id, actor=actor, now=stamp(self.clock), reason=reason, scope=scope
        )
        if forgotten is None:
            raise NotFound(f"memory {memory_id} not found")
        return forgotten

    def recover(
        self, memory_id: str, *, actor: Actor = Actor(), reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()
        now = stamp(self.clock)
        current = self.get(memory_id, scope=scope)
        if not current.is_deleted:
            raise Conflict(f"memory {memory_id} is not deleted")
        window = timedelta(milliseconds=self.config.retention.tombstone_retention_ms)
        if current.deleted_at and parse_ts(current.deleted_at) + window < parse_ts(now):
            raise Conflict(f"memory {memory_id} was deleted beyond the recovery window")
        recovered = self.core.recover(memory_id, actor=actor, now=now, scope=scope,
                                      reason=reason)
        if recovered is None:
            raise NotFound(f"memory {memory_id} not found")
        if recovered.is_deleted:  # deleted again (or never recovered) by a racing writer
            raise Conflict(f"memory {memory_id} could not be recovered; try again")
        return recovered

    def feedback(self, *_args: Any, **_kwargs: Any) -> Any:
        raise NotOnBackend("feedback", self.backend)

    def apply_graph(
        self, payload: Any, *, memory_id: str | None = None, actor: Actor = Actor()
    ) -> dict[str, Any]:
        """Author the knowledge graph through the one audited path (graph/apply.py)."""
        self.check_mutable()
        return self.graph.apply(payload, memory_id=memory_id, actor=actor)

    def community_resolved(self, filters: MemoryFilters) -> MemoryFilters:
        return self.graph.community_filter(filters)

    # -- policy -----------------------------------------------------------------------------

    def check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen("mutations are frozen (memory.pipelineV2.mutationsFrozen)")
