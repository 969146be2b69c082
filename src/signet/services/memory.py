"""The memory service: the one write path of a memory, and its reads, edits and feedback.

`remember` validates, normalises and scopes, then in one transaction inserts the memory, writes
history and enqueues the pipeline's and embed jobs (with `embedding.write_path: inline` a local
embedder embeds first). A live duplicate returns the existing id; an idempotency key replays the
first answer. Every writer comes through here on either backend: the service decides, the store seam
commits.
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
from signet.graph.apply import parse_payload as parse_graph_payload
from signet.graph.service import KnowledgeGraph
from signet.normalize import NormalizedContent, normalize_content
from signet.pipeline.writes import PreparedMemory
from signet.providers.embedder import Embedder
from signet.recall.vectors import VectorSearch
from signet.services import idempotency
from signet.services.idempotency import KeySpace
from signet.services.memory_input import (
    changed_columns,
    check_modifiable,
    check_text,
    new_memory,
    optional_str,
)
from signet.services.scope import scoped_filters, scoped_write
from signet.services.write_policy import embed_each, extracts, pipeline_on
from signet.store.accesses import AccessRecorder
from signet.store.backend import CoreStore
from signet.store.feedback import Feedback
from signet.store.graph_store import GraphOps
from signet.store.memory_ops import MemoryEdit, Within
from signet.types import (
    FEEDBACK_TYPES,
    MAX_OFFSET,
    Actor,
    HistoryEvent,
    Memory,
    MemoryFilters,
    MemoryScope,
    NewMemory,
    Page,
    RememberResult,
    parse_ts,
)

__all__ = ["MemoryService"]

log = logging.getLogger(__name__)


@dataclass
class MemoryService:
    config: Config
    # Every read and write of this service goes through the store seam (store/backend.py):
    # `SqliteCore` or `PostgresCore`.
    core: CoreStore
    embedder: Embedder | None
    vectors: VectorSearch | None
    graph: KnowledgeGraph
    # Reads record accesses here, off the read path; the one writer writes them later.
    accesses: AccessRecorder
    clock: Clock
    # Called after a write committed a memory without its vector (the daemon wakes its embed
    # worker with it, so freshness does not wait for the worker's idle poll).
    on_deferred: Callable[[], None] | None = None

    # -- remember ---------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        actor: Actor = Actor(),
        embed_inline: bool | None = None,
        idempotency_key: str | None = None,
        graph: Any = None,
        scope: MemoryScope | None = None,
        **fields: Any,
    ) -> RememberResult:
        """`idempotency_key`: a repeat with the same key and content returns the first result,
        writing nothing (the same key with other content is a Conflict). Keys live in the
        caller's scope. `graph`: a structured payload applied to the new memory (see
        `apply_graph`). `scope`: a scoped caller writes only inside its agent and project."""
        self.check_mutable()
        space = idempotency.key_space(idempotency_key, scope)
        check_text({"content": content, "graph": graph, **fields})
        if scope is not None:
            actor, fields = scoped_write(scope, actor, fields)
        payload = parse_graph_payload(graph) if graph is not None else None
        memory = new_memory(content, actor, fields, self.config.memory)
        norm = normalize_content(memory.content)
        if space is not None and (replay := idempotency.replay(self.core.idempotent(space), norm)):
            return replay
        vector = self._embed_for_write(norm.storage, embed_inline)
        within = None
        if payload is not None and not payload.is_empty():
            # The memory and its graph commit together (the graph applied inside the insert's
            # transaction): a graph that fails leaves no memory behind (a retry would otherwise
            # dedup onto a memory that lacks its graph).
            def within(ops: GraphOps, memory_id: str) -> object:
                return self.graph.apply(payload, memory_id=memory_id, actor=actor, graph=ops)
        return self._woken(self._write_new(memory, norm, vector, actor, space, within))

    def remember_many(
        self, items: Sequence[dict[str, Any]], *, actor: Actor = Actor()
    ) -> list[RememberResult]:
        """Remember several memories: one batched embedding call first (outside any write
        transaction), then each memory through the same write path as `remember`."""
        return [self.write_prepared(p) for p in self.prepare_memories(items, actor=actor)]

    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> list[PreparedMemory]:
        """First half of `remember` for many memories: validate and normalise each, then one
        batched embedding call (no transaction open). `prefixes=False` keeps content verbatim
        (a document chunk that happens to start with `critical:` is not pinned)."""
        self.check_mutable()
        for item in items:  # no lone surrogate, no NUL: refused naming the field, as `remember`
            check_text(item)
        memories = [
            new_memory(
                item["content"], actor, {k: v for k, v in item.items() if k != "content"},
                self.config.memory, prefixes=prefixes,
            )
            for item in items
        ]
        norms = [normalize_content(m.content) for m in memories]
        vectors = self._embed_batch([n.storage for n in norms], [n.content_hash for n in norms])
        return [
            PreparedMemory(m, n, v, actor) for m, n, v in zip(memories, norms, vectors, strict=True)
        ]

    def prepare_memory(self, content: str, *, actor: Actor, **fields: Any) -> PreparedMemory:
        """First half of `remember` for the pipeline: validate, normalise, embed (no tx open)."""
        check_text({"content": content, **fields})
        memory = new_memory(content, actor, fields, self.config.memory)
        norm = normalize_content(memory.content)
        vector = self._embed_for_write(norm.storage, None)
        return PreparedMemory(memory, norm, vector, actor)

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult:
        """Second half of `remember`: the same insert transaction (a savepoint when nested)."""
        return self._woken(
            self._write_new(prepared.memory, prepared.norm, prepared.vector, prepared.actor)
        )

    def apply_graph(
        self, payload: Any, *, memory_id: str | None = None, actor: Actor = Actor()
    ) -> dict[str, Any]:
        """Author the knowledge graph (entities, aliases, aspects, attributes, dependencies,
        relations) through the one audited path, graph/apply.py; returns what was written."""
        self.check_mutable()
        return self.graph.apply(payload, memory_id=memory_id, actor=actor)

    def _write_new(
        self, memory: NewMemory, norm: NormalizedContent, vector: np.ndarray | None, actor: Actor,
        space: KeySpace | None = None, within: Within | None = None,
    ) -> RememberResult:
        written = self.core.write_memory(
            memory, storage=norm.storage, normalized=norm.normalized,
            content_hash=norm.content_hash, actor=actor, now=stamp(self.clock), vector=vector,
            model=self.embedder.model if self.embedder is not None else None,
            jobs=self._jobs(memory), max_attempts=self.config.pipeline.max_attempts,
            extraction_status="pending" if self._extracts(memory) else "none",
            link_entities=True, key=space, within=within,
        )
        if written.result is None:  # a racing retry with the same key landed first
            assert space is not None and written.replayed is not None
            replayed = idempotency.replay(written.replayed, norm)
            assert replayed is not None
            return replayed
        # Inside a caller's transaction the row may still roll back: the next search's sync
        # loads it from the table once committed.
        if (written.vector_id is not None and self.vectors is not None and vector is not None
                and not self.core.in_write_tx):
            self.vectors.add(written.vector_id, vector)
        return written.result

    def _jobs(self, memory: NewMemory | Memory) -> tuple[str, ...]:
        """The pipeline's jobs for a new memory, or for new content of an existing one."""
        if not self.pipeline_on():
            return ()
        extracts = (self._extracts(memory) if isinstance(memory, NewMemory)
                    else memory.source_type != "pipeline")
        hints = self.config.pipeline.hints.enabled
        return tuple(j for j, on in (("extract", extracts), ("hints", hints)) if on)

    def _woken(self, result: RememberResult) -> RememberResult:
        """`result`, after waking the embed worker when its memory still lacks a vector (once
        committed: inside a caller's transaction the worker could not see the job yet, and
        finds it at its next poll)."""
        if not result.embedded:
            self._wake()
        return result

    def _wake(self) -> None:
        if self.on_deferred is not None and not self.core.in_write_tx:
            self.on_deferred()

    # -- embedding, before any transaction (write_path: inline) -----------------------------

    def _inline(self) -> bool:
        """Whether writes embed before their transaction: the configured write path is inline
        and the embedder is one that may run there (local, no network)."""
        return (
            self.embedder is not None and self.embedder.inline
            and self.config.embedding.write_path == "inline"
        )

    def _embed_for_write(self, text: str, embed_inline: bool | None) -> np.ndarray | None:
        if self.embedder is None:
            return None
        inline = self._inline() if embed_inline is None else embed_inline
        if not inline:
            return None
        # Embedded even when a vector of this content is stored already: vectors are shared by
        # every scope, and the write's answer and time must not depend on what others hold.
        try:
            return self.embedder.embed([text])[0]
        except ProviderError as exc:
            # The embed worker fills the gap later; remembering must not fail on it.
            log.warning("inline embedding failed, deferring to the embed worker: %s", exc)
            return None

    def _embed_batch(self, texts: list[str], hashes: list[str]) -> list[np.ndarray | None]:
        if self.embedder is None or not self._inline():
            return [None] * len(texts)
        return embed_each(self.embedder, texts, hashes)

    # -- read -------------------------------------------------------------------------------

    def mark_stale_vectors(self) -> int:
        """Mark every vector made by another model or width stale (at open, after a model
        change), so the embed worker's sweep re-embeds them; how many were marked."""
        assert self.embedder is not None
        changed = self.core.mark_stale_except(self.embedder.model, self.embedder.dimensions)
        if changed:
            log.info("marked %d vectors stale after a model change", changed)
        return changed

    def get(
        self, memory_id: str, *, scope: MemoryScope | None = None, access: bool = False,
        include_deleted: bool = True,
    ) -> Memory:
        """The memory as stored. `access`: a caller's read of it (the HTTP/MCP/CLI get) counts
        as an access; it is recorded off the read path (store/accesses.py) and written within
        a second, so the memory returned shows the counts from before this read.
        `include_deleted=False`: a forgotten memory is NotFound (the HTTP read's default)."""
        memory_id = self.core.resolve_id("memories", memory_id, noun="memory", scope=scope)
        memory = self.core.get_memory(memory_id, scope)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        if memory.is_deleted and not include_deleted:
            raise NotFound(f"memory {memory_id} is forgotten; include_deleted=true reads it"
                           " (POST /api/memory/{id}/recover brings it back)")
        if access and not self.config.pipeline.mutations_frozen:
            self.accesses.record([memory.id])
        return memory

    def list(
        self, filters: MemoryFilters = MemoryFilters(), *, limit: int = 50, offset: int = 0,
        scope: MemoryScope | None = None,
    ) -> Page:
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit must be between 1 and 1000")
        if not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}")
        filters = self.community_resolved(scoped_filters(filters, scope))
        items, total = self.core.list_memories(filters, limit=limit, offset=offset)
        return Page(tuple(items), total, limit, offset)

    def history(self, memory_id: str, *, scope: MemoryScope | None = None) -> builtins.list[HistoryEvent]:
        memory = self.get(memory_id, scope=scope)
        return self.core.history(memory.id)

    def community_resolved(self, filters: MemoryFilters) -> MemoryFilters:
        """The community filter by id: a name is resolved (graph/service.py), unknown or
        ambiguous ones are refused naming it."""
        return self.graph.community_filter(filters)

    # -- modify, forget, recover ------------------------------------------------------------

    def modify(
        self,
        memory_id: str,
        changes: dict[str, Any],
        *,
        actor: Actor = Actor(),
        expected_version: int | None = None,
        reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()
        check_modifiable(changes)
        current = self.get(memory_id, scope=scope)
        memory_id = current.id  # a short id resolved
        if current.is_deleted:
            raise Conflict(f"memory {memory_id} is deleted; recover it first")
        if scope is not None and scope.project is not None and changes.get("project", scope.project) != scope.project:
            raise Forbidden(f"this token may not move memories out of project {scope.project}")
        columns, norm = changed_columns(current, changes, self.config.memory)
        vector = None
        if norm is not None:
            vector = self._embed_for_write(norm.storage, None)
        edited = self.core.update_memory(memory_id, MemoryEdit(
            columns, actor=actor, now=stamp(self.clock), reason=reason,
            expected_version=expected_version, changed=sorted(changes), vector=vector,
            model=self.embedder.model if self.embedder is not None else None,
            # New content names other things: the graph's links, the hints and extraction
            # are redone in the same transaction (store/memory_ops.py `_relink`).
            jobs=self._jobs(current) if norm is not None else (),
            max_attempts=self.config.pipeline.max_attempts,
        ))
        if edited is None:
            raise NotFound(f"memory {memory_id} not found")
        if edited.vector_id is not None and vector is not None and self.vectors is not None:
            self.vectors.add(edited.vector_id, vector)
        if norm is not None and vector is None:
            self._wake()  # new content without its vector yet
        return edited.memory

    def forget(
        self,
        memory_id: str,
        *,
        actor: Actor = Actor(),
        force: bool = False,
        reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()

        def unpinned(current: Memory) -> None:
            if current.pinned and not force:
                raise Conflict(f"memory {current.id} is pinned; forget it with --force"
                               " (force=true over HTTP, force over MCP)")

        forgotten = self.core.forget(
            memory_id, actor=actor, now=stamp(self.clock), reason=reason, scope=scope,
            check=unpinned, metadata={"force": force} if force else None,
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
        window = timedelta(milliseconds=self.config.retention.tombstone_retention_ms)

        def recoverable(current: Memory) -> None:
            if not current.is_deleted:
                raise Conflict(f"memory {current.id} is not deleted")
            if current.deleted_at and parse_ts(current.deleted_at) + window < parse_ts(now):
                raise Conflict(f"memory {current.id} was deleted beyond the recovery window")

        recovered = self.core.recover(
            memory_id, actor=actor, now=now, reason=reason, scope=scope, check=recoverable
        )
        if recovered is None:
            raise NotFound(f"memory {memory_id} not found")
        return recovered

    # -- feedback ---------------------------------------------------------------------------

    def feedback(
        self,
        memory_id: str,
        feedback_type: str,
        *,
        actor: Actor = Actor(),
        correction_text: str | None = None,
        session_id: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Feedback:
        """Record an agent's verdict on a memory it used; the memory itself is not changed.
        Positive feedback is an access (recall's bounded rehearsal boost reads these; being
        returned by a search is not one) and a use of the skill the memory indexes
        (signet/skills.py: its importance is back at 1, its decay restarts)."""
        if feedback_type not in FEEDBACK_TYPES:
            raise InvalidInput(f"feedback must be one of {', '.join(FEEDBACK_TYPES)}")
        text = optional_str(correction_text, "correction_text")
        if feedback_type == "correction" and not (text or "").strip():
            raise InvalidInput("a correction needs correction_text")
        if text is not None and len(text) > self.config.memory.max_content_chars:
            raise InvalidInput("correction_text is too long")
        graph = self.graph

        def desire_paths(ops: GraphOps, found: str, now: str) -> None:
            # The traversal path that reached the memory moves.
            graph.on_feedback(ops, found, feedback_type, now)

        recorded = self.core.add_feedback(
            memory_id, feedback_type=feedback_type, correction_text=text,
            session_id=optional_str(session_id, "session_id") or actor.session_id,
            actor=actor.name, agent_id=actor.agent_id, now=stamp(self.clock), scope=scope,
            used=feedback_type == "positive", in_tx=desire_paths,
        )
        if recorded is None:
            raise NotFound(f"memory {memory_id} not found")
        return recorded

    # -- policy -----------------------------------------------------------------------------

    def check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen()

    def pipeline_on(self) -> bool:
        """Whether new memories go through the pipeline (services/write_policy.py)."""
        return pipeline_on(self.config.pipeline)

    def _extracts(self, memory: NewMemory) -> bool:
        return extracts(self.config.pipeline, memory)
