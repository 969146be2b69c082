"""The memory service: the one write path of a memory, and its reads, edits and feedback.

Write path of `remember`: validate and normalise (services/memory_input.py), apply the caller's
scope (services/scope.py), then in one transaction insert the memory (the FTS trigger indexes
it, so keyword recall finds it at once), write history and enqueue the pipeline's jobs and an
`embed` job. Writes never wait for the model (`embedding.write_path: deferred`, the default):
the embed worker, on its own thread in the daemon and woken by `on_deferred` as the write
returns, embeds what arrived meanwhile in one batch and stores the vectors. With `write_path:
inline` (tests that need the vector at once, single-user set-ups) a local embedder embeds
*before* the write transaction (no embedding or LLM call ever runs while the write lock is
held) and the vector is stored in the same transaction. A duplicate (same
content hash among live rows, even from a racing writer) is a dedup hit that returns the existing
id and records `dedupedExistingId` in history. An idempotency key replays the first answer
(services/idempotency.py).

Everyone who writes a memory comes through here: the adapters via SignetApp, the pipeline's
workers (extraction, summaries, documents) via `prepare_memory(ies)` + `write_prepared`, the
review queue, batch forget/modify, the skills reconciler. The SQL is in the store modules this
calls by name (`mem_sql.insert`, `history_sql.record`, `jobs_sql.enqueue`, ...); the time comes
from the clock it is given.
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
from signet.services.scope import check_scope, scoped_filters, scoped_write
from signet.services.write_policy import embed_missing, extracts, pipeline_on
from signet.store import embeddings as emb_sql
from signet.store import feedback as feedback_sql
from signet.store import graph as graph_sql
from signet.store import history as history_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import skills as skills_sql
from signet.store.accesses import AccessRecorder
from signet.store.db import Store
from signet.store.feedback import Feedback
from signet.store.graph_store import SqliteGraphOps
from signet.store.prefixes import resolve_prefix
from signet.types import (
    FEEDBACK_TYPES,
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
    store: Store
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
        if space is not None and (replay := idempotency.replay(self.store.reader(), space, norm)):
            return replay
        vector = self._embed_for_write(norm.storage, norm.content_hash, embed_inline)
        if payload is None or payload.is_empty():
            return self._woken(self._write_new(memory, norm, vector, actor, space))
        # The memory and its graph commit together: a graph that fails leaves no memory behind
        # (a retry would otherwise dedup onto a memory that lacks its graph).
        with self.store.write_tx():
            result = self._write_new(memory, norm, vector, actor, space)
            self.apply_graph(payload, memory_id=result.id, actor=actor)
        return self._woken(result)

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
        memory = new_memory(content, actor, fields, self.config.memory)
        norm = normalize_content(memory.content)
        vector = self._embed_for_write(norm.storage, norm.content_hash, None)
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
        space: KeySpace | None = None,
    ) -> RememberResult:
        now = stamp(self.clock)
        with self.store.write_tx() as conn:
            # Checked again under the write lock: a racing retry may have landed meanwhile.
            if space is not None and (replay := idempotency.replay(conn, space, norm)):
                return replay
            # `embedded`: the content has a current vector, made now or earlier (possibly for
            # the same text in another scope: neither the answer nor the row may depend on that).
            embedded = vector is not None or (
                self.embedder is not None
                and emb_sql.has_current(conn, norm.content_hash, self.embedder.model)
            )
            memory_id, deduped = mem_sql.insert(
                conn, memory, storage=norm.storage, normalized=norm.normalized,
                content_hash=norm.content_hash, now=now,
                embedding_model=self.embedder.model if embedded and self.embedder else None,
                extraction_status="pending" if self._extracts(memory) else "none",
            )
            if deduped:
                history_sql.record(
                    conn, memory_id, "none", actor, now, new_content=norm.storage,
                    reason="duplicate content", metadata={"dedupedExistingId": memory_id},
                )
            else:
                self._after_insert(conn, memory_id, norm.storage, actor, now, memory)
            emb_id = self._store_vector(conn, norm.content_hash, vector, memory_id, now)
            stored = mem_sql.get(conn, memory_id)
            assert stored is not None
            result = RememberResult(memory_id, deduped, stored, embedded=embedded)
            if space is not None:
                idempotency.record(conn, space, norm, result, now)
        # Inside a caller's transaction the row may still roll back: the next search's sync
        # loads it from the table once committed.
        if (emb_id is not None and self.vectors is not None and vector is not None
                and not self.store.in_write_tx):
            self.vectors.add(emb_id, vector)
        return result

    def _after_insert(
        self, conn: Any, memory_id: str, content: str, actor: Actor, now: str, memory: NewMemory
    ) -> None:
        history_sql.record(conn, memory_id, "created", actor, now, new_content=content)
        # Inline entity linking (seed 002): existing entities only, no LLM, same tx.
        graph_sql.link_known_entities(conn, memory_id, memory.agent_id, content, now)
        if self.pipeline_on():
            if self._extracts(memory):
                self._enqueue(conn, "extract", memory_id, now)
            if self.config.pipeline.hints.enabled:
                self._enqueue(conn, "hints", memory_id, now)

    def _enqueue(self, conn: Any, job_type: str, memory_id: str, now: str) -> None:
        jobs_sql.enqueue(
            conn, job_type, memory_id=memory_id, now=now,
            max_attempts=self.config.pipeline.max_attempts,
        )

    def _store_vector(
        self, conn: Any, content_hash: str, vector: np.ndarray | None, memory_id: str, now: str
    ) -> int | None:
        """The vector stored (its embedding id), or an embed job when there is none yet."""
        if vector is None or self.embedder is None:
            if self.embedder is not None and not emb_sql.has_current(
                conn, content_hash, self.embedder.model
            ):
                self._enqueue(conn, "embed", memory_id, now)
            return None
        if emb_sql.has_current(conn, content_hash, self.embedder.model):
            return None
        return emb_sql.upsert(
            conn, content_hash, vector, model=self.embedder.model, now=now, source_id=memory_id
        )

    def _woken(self, result: RememberResult) -> RememberResult:
        """`result`, after waking the embed worker when its memory still lacks a vector (once
        committed: inside a caller's transaction the worker could not see the job yet, and
        finds it at its next poll)."""
        if not result.embedded:
            self._wake()
        return result

    def _wake(self) -> None:
        if self.on_deferred is not None and not self.store.in_write_tx:
            self.on_deferred()

    # -- embedding, before any transaction (write_path: inline) -----------------------------

    def _inline(self) -> bool:
        """Whether writes embed before their transaction: the configured write path is inline
        and the embedder is one that may run there (local, no network)."""
        return (
            self.embedder is not None and self.embedder.inline
            and self.config.embedding.write_path == "inline"
        )

    def _embed_for_write(
        self, text: str, content_hash: str, embed_inline: bool | None
    ) -> np.ndarray | None:
        if self.embedder is None:
            return None
        inline = self._inline() if embed_inline is None else embed_inline
        if not inline:
            return None
        if emb_sql.has_current(self.store.reader(), content_hash, self.embedder.model):
            return None
        try:
            return self.embedder.embed([text])[0]
        except ProviderError as exc:
            # The embed worker fills the gap later; remembering must not fail on it.
            log.warning("inline embedding failed, deferring to the embed worker: %s", exc)
            return None

    def _embed_batch(self, texts: list[str], hashes: list[str]) -> list[np.ndarray | None]:
        if self.embedder is None or not self._inline():
            return [None] * len(texts)
        conn, model = self.store.reader(), self.embedder.model
        return embed_missing(
            self.embedder, texts, hashes, lambda h: emb_sql.has_current(conn, h, model)
        )

    # -- read -------------------------------------------------------------------------------

    def mark_stale_vectors(self) -> int:
        """Mark every vector made by another model or width stale (at open, after a model
        change), so the embed worker's sweep re-embeds them; how many were marked."""
        assert self.embedder is not None
        with self.store.write_tx() as conn:
            changed = emb_sql.mark_stale_except(conn, self.embedder.model, self.embedder.dimensions)
        if changed:
            log.info("marked %d vectors stale after a model change", changed)
        return changed

    def get(
        self, memory_id: str, *, scope: MemoryScope | None = None, access: bool = False
    ) -> Memory:
        """The memory as stored. `access`: a caller's read of it (the HTTP/MCP/CLI get) counts
        as an access; it is recorded off the read path (store/accesses.py) and written within
        a second, so the memory returned shows the counts from before this read."""
        conn = self.store.reader()
        memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
        check_scope(conn, memory_id, scope)
        memory = mem_sql.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        if access and not self.config.pipeline.mutations_frozen:
            self.accesses.record([memory.id])
        return memory

    def list(
        self, filters: MemoryFilters = MemoryFilters(), *, limit: int = 50, offset: int = 0,
        scope: MemoryScope | None = None,
    ) -> Page:
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit must be between 1 and 1000")
        if offset < 0:
            raise InvalidInput("offset must not be negative")
        filters = self.community_resolved(scoped_filters(filters, scope))
        items, total = mem_sql.list_page(self.store.reader(), filters, limit=limit, offset=offset)
        return Page(tuple(items), total, limit, offset)

    def history(self, memory_id: str, *, scope: MemoryScope | None = None) -> builtins.list[HistoryEvent]:
        memory = self.get(memory_id, scope=scope)
        return history_sql.for_memory(self.store.reader(), memory.id)

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
            vector = self._embed_for_write(norm.storage, norm.content_hash, None)
        now = stamp(self.clock)
        with self.store.write_tx() as conn:
            fresh = mem_sql.get(conn, memory_id)
            assert fresh is not None
            if expected_version is not None and fresh.version != expected_version:
                raise Conflict(
                    f"memory {memory_id} is at version {fresh.version}, not {expected_version}"
                )
            if norm is not None or "project" in columns:
                # Dedup is per agent and project: new content, or a move to another project,
                # must not meet the same text already live there.
                content_hash = norm.content_hash if norm is not None else fresh.content_hash
                other = mem_sql.find_live_by_hash(
                    conn, content_hash or "", fresh.agent_id, columns.get("project", fresh.project)
                )
                if other and other != memory_id:
                    raise Conflict(f"memory {other} already holds this content")
            mem_sql.update(conn, memory_id, columns, now)
            history_sql.record(
                conn, memory_id, "updated", actor, now, old_content=fresh.content,
                new_content=columns.get("content", fresh.content), reason=reason,
                metadata={"changed": sorted(changes)},
            )
            emb_id = None
            if norm is not None:
                emb_id = self._store_vector(conn, norm.content_hash, vector, memory_id, now)
                self._relink(conn, fresh, norm.storage, now)
            updated = mem_sql.get(conn, memory_id)
        if emb_id is not None and vector is not None and self.vectors is not None:
            self.vectors.add(emb_id, vector)
        if norm is not None and vector is None:
            self._wake()  # new content without its vector yet
        assert updated is not None
        return updated

    def _relink(self, conn: Any, memory: Memory, content: str, now: str) -> None:
        """New content names other things: the graph forgets what the old text named, the
        inline linker links the entities the new text names, and extraction (which creates
        the entities that do not exist yet) and hints run again. Same transaction as the
        update."""
        graph_sql.unlink_memory(conn, memory.id)
        graph_sql.link_known_entities(conn, memory.id, memory.agent_id, content, now)
        mem_sql.set_hints(conn, memory.id, "")  # hints of the old text would find it wrongly
        if not self.pipeline_on():
            return
        if memory.source_type != "pipeline":
            self._enqueue(conn, "extract", memory.id, now)
            mem_sql.set_extraction_status(conn, memory.id, "pending", None)
        if self.config.pipeline.hints.enabled:
            self._enqueue(conn, "hints", memory.id, now)

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
        now = stamp(self.clock)
        with self.store.write_tx() as conn:
            current = self._locked(conn, memory_id, scope)
            if current.is_deleted:
                return current
            if current.pinned and not force:
                raise Conflict(f"memory {current.id} is pinned; pass force to forget it")
            mem_sql.soft_delete(conn, current.id, now)
            history_sql.record(
                conn, current.id, "deleted", actor, now, old_content=current.content,
                reason=reason, metadata={"force": force} if force else None,
            )
            deleted = mem_sql.get(conn, current.id)
        assert deleted is not None
        return deleted

    def recover(
        self, memory_id: str, *, actor: Actor = Actor(), reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self.check_mutable()
        now = stamp(self.clock)
        window = timedelta(milliseconds=self.config.retention.tombstone_retention_ms)
        with self.store.write_tx() as conn:
            current = self._locked(conn, memory_id, scope)
            memory_id = current.id
            if not current.is_deleted:
                raise Conflict(f"memory {memory_id} is not deleted")
            if current.deleted_at and parse_ts(current.deleted_at) + window < parse_ts(now):
                raise Conflict(f"memory {memory_id} was deleted beyond the recovery window")
            other = mem_sql.find_live_by_hash(
                conn, current.content_hash or "", current.agent_id, current.project
            )
            if other:
                raise Conflict(f"memory {other} already holds this content")
            mem_sql.recover(conn, memory_id, now)
            history_sql.record(
                conn, memory_id, "recovered", actor, now, new_content=current.content,
                reason=reason,
            )
            recovered = mem_sql.get(conn, memory_id)
        assert recovered is not None
        return recovered

    def _locked(self, conn: Any, memory_id: str, scope: MemoryScope | None) -> Memory:
        """The memory `memory_id` (a prefix resolved, the scope checked), read inside the
        caller's write transaction."""
        memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
        check_scope(conn, memory_id, scope)
        current = mem_sql.get(conn, memory_id)
        if current is None:
            raise NotFound(f"memory {memory_id} not found")
        return current

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
        """Record an agent's verdict on a memory it used; the memory itself is not changed."""
        if feedback_type not in FEEDBACK_TYPES:
            raise InvalidInput(f"feedback must be one of {', '.join(FEEDBACK_TYPES)}")
        text = optional_str(correction_text, "correction_text")
        if feedback_type == "correction" and not (text or "").strip():
            raise InvalidInput("a correction needs correction_text")
        if text is not None and len(text) > self.config.memory.max_content_chars:
            raise InvalidInput("correction_text is too long")
        with self.store.write_tx() as conn:
            memory_id = self._locked(conn, memory_id, scope).id
            recorded = feedback_sql.add(
                conn, memory_id=memory_id, feedback_type=feedback_type, correction_text=text,
                session_id=optional_str(session_id, "session_id") or actor.session_id,
                actor=actor.name, agent_id=actor.agent_id, now=stamp(self.clock),
            )
            if feedback_type == "positive":
                # The agent used it: an access (recall's bounded rehearsal boost reads these);
                # being returned by a search is not one.
                mem_sql.touch(conn, [memory_id], recorded.created_at)
            # Desire paths (seed 003): the traversal path that reached the memory moves.
            self.graph.on_feedback(SqliteGraphOps(conn), memory_id, feedback_type, recorded.created_at)
            if feedback_type == "positive":
                self._record_skill_use(conn, memory_id, recorded.created_at)
            return recorded

    @staticmethod
    def _record_skill_use(conn: Any, memory_id: str, now: str) -> None:
        """A skill that helped is used (signet/skills.py): its use is counted and its
        importance is back at 1, so its decay restarts from `now`."""
        if skills_sql.record_use_for_memory(conn, memory_id, now) is not None:
            skills_sql.set_importance(conn, memory_id, 1.0)

    # -- policy -----------------------------------------------------------------------------

    def check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen()

    def pipeline_on(self) -> bool:
        """Whether new memories go through the pipeline (services/write_policy.py)."""
        return pipeline_on(self.config.pipeline)

    def _extracts(self, memory: NewMemory) -> bool:
        return extracts(self.config.pipeline, memory)
