"""The composition root: reads nothing itself, wires a Config into store, providers and recall,
and exposes the operations every adapter (daemon, MCP, CLI, hooks, benchmarks) calls.

Write path of `remember`: validate and normalise, embed *before* the write transaction (no
embedding or LLM call ever runs while the write lock is held), then in one transaction insert
the memory (the FTS trigger indexes it), store its vector, write history and enqueue the
pipeline's jobs. A duplicate (same content hash among live rows, even from a racing writer) is a
dedup hit that returns the existing id and records `dedupedExistingId` in history.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from signet import batch, maintenance, skills
from signet.config import Config
from signet.config_view import effective_config
from signet.connectors.folder import ConnectorWorker, FolderConnectors
from signet.documents.fetch import FetchPolicy
from signet.documents.service import DocumentService
from signet.documents.worker import DocumentWorker
from signet.errors import Conflict, Forbidden, Frozen, InvalidInput, NotFound, ProviderError
from signet.graph.apply import apply_payload as apply_graph_payload
from signet.graph.apply import parse_payload as parse_graph_payload
from signet.graph.service import KnowledgeGraph
from signet.identity import read_identity, write_identity
from signet.normalize import normalize_content
from signet.pipeline.rule_extractor import extraction_mode
from signet.pipeline.writes import PreparedMemory, resolve_review
from signet.projection.service import ProjectionService
from signet.providers.embedder import Embedder, make_embedder
from signet.providers.guard import ProviderGuard
from signet.providers.llm import LLM, make_llm
from signet.recall.hybrid import Recaller
from signet.recall.vectors import VectorSearch
from signet.secret_store import SecretStore
from signet.sessions.service import Sessions
from signet.store import embeddings as emb_sql
from signet.store import feedback as feedback_sql
from signet.store import graph as graph_sql
from signet.store import history as history_sql
from signet.store import idempotency as idem_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import review as review_sql
from signet.store import scope as scope_sql
from signet.store import search_telemetry as qa_sql
from signet.store.backend import refuse_unported
from signet.store.db import Store
from signet.store.feedback import FEEDBACK_TYPES, Feedback
from signet.store.jobs import Job
from signet.store.prefixes import resolve_prefix
from signet.store.review import ReviewItem
from signet.telemetry import Telemetry
from signet.types import (
    MEMORY_TYPES,
    Actor,
    HistoryEvent,
    Memory,
    MemoryFilters,
    MemoryScope,
    NewMemory,
    Page,
    RecallQuery,
    RecallResponse,
    RememberResult,
    parse_ts,
    utc_now,
)
from signet.workers.embed_worker import EmbedWorker
from signet.workers.extract_worker import ExtractWorker
from signet.workers.hints_worker import HintsWorker
from signet.workers.loop import ReaperWorker, Worker, WorkerLoop
from signet.workers.retention_worker import RetentionReport, RetentionWorker, sweep
from signet.workers.scheduled import ScheduledWorker
from signet.workers.summary_worker import SummaryWorker

log = logging.getLogger(__name__)

_CRITICAL = re.compile(r"^\s*critical:\s*", re.IGNORECASE)
_TAG_PREFIX = re.compile(r"^\s*\[([^\]\n]{1,500})\]:\s*")
MODIFIABLE = ("content", "type", "tags", "importance", "pinned", "category", "who", "why", "project")


@dataclass
class SignetApp:
    config: Config
    store: Store
    embedder: Embedder | None
    recaller: Recaller
    vectors: VectorSearch | None = None
    notes: list[str] = field(default_factory=list)
    llm: LLM | None = None
    graph: KnowledgeGraph = field(init=False, repr=False)
    projection: ProjectionService = field(init=False, repr=False)
    sessions: Sessions = field(init=False, repr=False)
    documents: DocumentService = field(init=False, repr=False)
    connectors: FolderConnectors = field(init=False, repr=False)
    _workers: list[Worker] | None = field(default=None, repr=False)
    # Local operational telemetry (signet/telemetry.py): the daemon's middleware and the LLM's
    # usage sink feed it. The batch key signs batch-forget confirm tokens (signet/batch.py).
    telemetry: Telemetry = field(default_factory=Telemetry, repr=False)
    batch_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    # -- lifecycle --------------------------------------------------------------------------

    @classmethod
    def open(
        cls, config: Config, *, embedder: Embedder | None | str = "config",
        llm: LLM | None | str = "config",
    ) -> SignetApp:
        """Open the workspace's database. `embedder` and `llm` override the configured
        ones (tests)."""
        refuse_unported(config.store)  # a postgres store does not carry the whole app yet
        # secret:NAME keys resolve before anything opens: a missing one leaves nothing open.
        telemetry = Telemetry(
            enabled=config.telemetry.enabled, error_ring_size=config.telemetry.error_ring_size
        )
        chosen = _configured_embedder(config) if embedder == "config" else embedder
        chosen_llm = _configured_llm(config, telemetry.record_llm) if llm == "config" else llm
        store = Store.open(config.db_path)
        assert not isinstance(chosen, str)
        vectors = (
            VectorSearch(chosen.model, chosen.dimensions, config.embedding.index) if chosen else None
        )
        recaller = Recaller(store, config.search, chosen, vectors)
        if chosen is not None:
            search = config.search
            recaller.guard = ProviderGuard(
                "query embedding", budget_s=search.query_embed_timeout_ms / 1000,
                failures=search.embed_breaker_failures,
                cooldown_s=search.embed_breaker_cooldown_ms / 1000,
            )
        app = cls(config, store, chosen, recaller, vectors)
        app.telemetry = telemetry
        app.graph = KnowledgeGraph.attach(
            store, config.pipeline, recaller, chosen.model if chosen else None
        )
        app.projection = ProjectionService(
            store, chosen.model if chosen else None, chosen.dimensions if chosen else None
        )
        app.documents = DocumentService(
            store, config.documents, max_attempts=config.pipeline.max_attempts,
            frozen=config.pipeline.mutations_frozen,
        )
        app.connectors = FolderConnectors(store, app.documents)
        app.llm = chosen_llm  # type: ignore[assignment]
        # The lineage (signet/sessions): recall's `expand` reads transcripts through it.
        app.sessions = Sessions(config, store)
        recaller.transcripts = app.sessions.excerpts
        if app._search_qa_on():
            with store.write_tx() as conn:
                qa_sql.ensure(conn)
        if chosen is not None:
            app._mark_stale_vectors()
        return app

    def close(self) -> None:
        if self.recaller.guard is not None:
            self.recaller.guard.close()
        self.recaller.accesses.close()  # the accesses still buffered, written before closing
        if self.recaller.query_embeddings is not None:
            self.recaller.query_embeddings.close()
        self.store.close()

    def __enter__(self) -> SignetApp:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _mark_stale_vectors(self) -> None:
        assert self.embedder is not None
        with self.store.write_tx() as conn:
            changed = emb_sql.mark_stale_except(conn, self.embedder.model, self.embedder.dimensions)
        if changed:
            self.notes.append(f"{changed} vectors from another model marked stale")
            log.info("marked %d vectors stale after a model change", changed)

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
        self._check_mutable()
        space = _key_space(idempotency_key, scope)
        _check_text({"content": content, "graph": graph, **fields})
        if scope is not None:
            actor, fields = _scoped_write(scope, actor, fields)
        payload = parse_graph_payload(graph) if graph is not None else None
        memory = self._new_memory(content, actor, fields)
        norm = normalize_content(memory.content)
        if space is not None and (replay := _replay(self.store.reader(), space, norm)):
            return replay
        vector = self._embed_for_write(norm.storage, norm.content_hash, embed_inline)
        if payload is None or payload.is_empty():
            return self._write_new(memory, norm, vector, actor, space)
        # The memory and its graph commit together: a graph that fails leaves no memory behind
        # (a retry would otherwise dedup onto a memory that lacks its graph).
        with self.store.write_tx():
            result = self._write_new(memory, norm, vector, actor, space)
            self.apply_graph(payload, memory_id=result.id, actor=actor)
        return result

    def apply_graph(
        self, payload: Any, *, memory_id: str | None = None, actor: Actor = Actor()
    ) -> dict[str, Any]:
        """Author the knowledge graph (entities, aliases, aspects, attributes, dependencies,
        relations) through the one audited path, graph/apply.py; returns what was written."""
        self._check_mutable()
        spec = parse_graph_payload(payload)
        with self.store.write_tx() as conn:
            if memory_id is not None and mem_sql.get(conn, memory_id) is None:
                raise NotFound(f"memory {memory_id} not found")
            applied = apply_graph_payload(
                conn, spec, agent_id=actor.agent_id, actor=actor, now=utc_now(),
                memory_id=memory_id,
            )
        return applied.summary()

    def _write_new(
        self, memory: NewMemory, norm: Any, vector: np.ndarray | None, actor: Actor,
        space: idem_sql.KeySpace | None = None,
    ) -> RememberResult:
        now = utc_now()
        with self.store.write_tx() as conn:
            # Checked again under the write lock: a racing retry may have landed meanwhile.
            if space is not None and (replay := _replay(conn, space, norm)):
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
                idem_sql.put(
                    conn, space, content_hash=norm.content_hash, memory_id=memory_id,
                    response=_result_json(result), now=now,
                )
        # Inside a caller's transaction the row may still roll back: the next search's sync
        # loads it from the table once committed.
        if (emb_id is not None and self.vectors is not None and vector is not None
                and not self.store.in_write_tx):
            self.vectors.add(emb_id, vector)
        return result

    def remember_many(
        self, items: Sequence[dict[str, Any]], *, actor: Actor = Actor()
    ) -> list[RememberResult]:
        """Remember several memories: one batched embedding call first (outside any write
        transaction), then each memory through the same write path as `remember`."""
        self._check_mutable()
        prepared = [self._new_memory(item["content"], actor, _without(item, "content")) for item in items]
        norms = [normalize_content(m.content) for m in prepared]
        vectors = self._embed_batch([n.storage for n in norms], [n.content_hash for n in norms])
        results = []
        for memory, norm, vector in zip(prepared, norms, vectors, strict=True):
            results.append(self._write_new(memory, norm, vector, actor))
        return results

    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> list[PreparedMemory]:
        """First half of `remember` for many memories: validate and normalise each, then one
        batched embedding call (no transaction open). `prefixes=False` keeps content verbatim
        (a document chunk that happens to start with `critical:` is not pinned)."""
        self._check_mutable()
        memories = [
            self._new_memory(item["content"], actor, _without(item, "content"), prefixes=prefixes)
            for item in items
        ]
        norms = [normalize_content(m.content) for m in memories]
        vectors = self._embed_batch([n.storage for n in norms], [n.content_hash for n in norms])
        return [
            PreparedMemory(m, n, v, actor) for m, n, v in zip(memories, norms, vectors, strict=True)
        ]

    def _embed_batch(self, texts: list[str], hashes: list[str]) -> list[np.ndarray | None]:
        if self.embedder is None or not self.embedder.inline:
            return [None] * len(texts)
        conn = self.store.reader()
        todo = [i for i, h in enumerate(hashes) if not emb_sql.has_current(conn, h, self.embedder.model)]
        unique: dict[str, int] = {}
        for i in todo:
            unique.setdefault(hashes[i], i)
        out: list[np.ndarray | None] = [None] * len(texts)
        if not unique:
            return out
        try:
            matrix = self.embedder.embed([texts[i] for i in unique.values()])
        except ProviderError as exc:
            log.warning("batch embedding failed, deferring to the embed worker: %s", exc)
            return out
        for row, i in enumerate(unique.values()):
            out[i] = matrix[row]
        return out

    def _after_insert(
        self, conn: Any, memory_id: str, content: str, actor: Actor, now: str, memory: NewMemory
    ) -> None:
        history_sql.record(conn, memory_id, "created", actor, now, new_content=content)
        # Inline entity linking (seed 002): existing entities only, no LLM, same tx.
        graph_sql.link_known_entities(conn, memory_id, memory.agent_id, content, now)
        if self._pipeline_on():
            if self._extracts(memory):
                jobs_sql.enqueue(
                    conn, "extract", memory_id=memory_id, now=now, max_attempts=self._attempts()
                )
            if self.config.pipeline.hints.enabled:
                jobs_sql.enqueue(
                    conn, "hints", memory_id=memory_id, now=now, max_attempts=self._attempts()
                )

    def _store_vector(
        self, conn: Any, content_hash: str, vector: np.ndarray | None, memory_id: str, now: str
    ) -> int | None:
        if vector is None or self.embedder is None:
            if self.embedder is not None and not emb_sql.has_current(
                conn, content_hash, self.embedder.model
            ):
                jobs_sql.enqueue(
                    conn, "embed", memory_id=memory_id, now=now, max_attempts=self._attempts()
                )
            return None
        if emb_sql.has_current(conn, content_hash, self.embedder.model):
            return None
        return emb_sql.upsert(
            conn, content_hash, vector, model=self.embedder.model, now=now, source_id=memory_id
        )

    def _embed_for_write(
        self, text: str, content_hash: str, embed_inline: bool | None
    ) -> np.ndarray | None:
        if self.embedder is None:
            return None
        inline = self.embedder.inline if embed_inline is None else embed_inline
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

    def _new_memory(
        self, content: str, actor: Actor, fields: dict[str, Any], *, prefixes: bool = True
    ) -> NewMemory:
        if not isinstance(content, str):
            raise InvalidInput("content must be a string")
        unknown = set(fields) - set(NewMemory.__dataclass_fields__)
        if unknown:
            raise InvalidInput(f"unknown field(s): {', '.join(sorted(unknown))}")
        content, prefix_fields = _apply_prefixes(content) if prefixes else (content, {})
        merged = {**prefix_fields, **{k: v for k, v in fields.items() if v is not None}}
        if "tags" in prefix_fields and "tags" in fields and fields["tags"]:
            merged["tags"] = tuple(dict.fromkeys([*prefix_fields["tags"], *fields["tags"]]))
        memory = NewMemory(content=content, agent_id=actor.agent_id, session_id=actor.session_id)
        memory = replace(memory, **merged)
        return self._validated(memory)

    def _validated(self, memory: NewMemory) -> NewMemory:
        text = memory.content.strip()
        if not text:
            raise InvalidInput("content is empty")
        limit = self.config.memory.max_content_chars
        if len(memory.content) > limit:
            raise InvalidInput(f"content is {len(memory.content)} characters; the maximum is {limit}")
        if memory.type not in MEMORY_TYPES:
            raise InvalidInput(f"invalid type {memory.type!r} (one of {', '.join(MEMORY_TYPES)})")
        for name in ("importance", "confidence"):
            value = getattr(memory, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise InvalidInput(f"{name} must be a number between 0 and 1")
        tags = _clean_tags(memory.tags, self.config.memory.max_tags)
        if memory.event_at is not None:
            _check_ts(memory.event_at, "event_at")
        return replace(memory, tags=tags, importance=float(memory.importance))

    # -- read -------------------------------------------------------------------------------

    def get(
        self, memory_id: str, *, scope: MemoryScope | None = None, access: bool = False
    ) -> Memory:
        """The memory as stored. `access`: a caller's read of it (the HTTP/MCP/CLI get) counts
        as an access; it is recorded off the read path (store/accesses.py) and written within
        a second, so the memory returned shows the counts from before this read."""
        conn = self.store.reader()
        memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
        _check_scope(conn, memory_id, scope)
        memory = mem_sql.get(conn, memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        if access and not self.config.pipeline.mutations_frozen:
            self.recaller.accesses.record([memory.id])
        return memory

    def flush_accesses(self) -> int:
        """Write the accesses recorded so far now (tests, benchmarks, before a report)."""
        return self.recaller.accesses.flush()

    def list(
        self, filters: MemoryFilters = MemoryFilters(), *, limit: int = 50, offset: int = 0,
        scope: MemoryScope | None = None,
    ) -> Page:
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit must be between 1 and 1000")
        if offset < 0:
            raise InvalidInput("offset must not be negative")
        filters = self._community_resolved(_scoped_filters(filters, scope))
        items, total = mem_sql.list_page(self.store.reader(), filters, limit=limit, offset=offset)
        return Page(tuple(items), total, limit, offset)

    def history(self, memory_id: str, *, scope: MemoryScope | None = None) -> list[HistoryEvent]:
        memory = self.get(memory_id, scope=scope)
        return history_sql.for_memory(self.store.reader(), memory.id)

    def recall(
        self, query: RecallQuery, *, actor: Actor | None = None, route: str = "recall",
        scope: MemoryScope | None = None,
    ) -> RecallResponse:
        """`actor` and `route` only label the recall QA ledger row (when that is enabled).
        `scope`: a scoped caller recalls only inside its agent and project."""
        if scope is not None:
            query = replace(query, filters=_scoped_filters(query.filters, scope))
        if query.filters.community is not None:
            query = replace(query, filters=self._community_resolved(query.filters))
        if query.touch and self.config.pipeline.mutations_frozen:
            query = replace(query, touch=False)
        started = time.perf_counter()
        response = self.recaller.recall(query)
        if self._search_qa_on():
            self._record_search(query, response, actor or Actor(), route, started)
        return response

    def _community_resolved(self, filters: MemoryFilters) -> MemoryFilters:
        """The community filter by id: a name is resolved (graph/service.py), unknown or
        ambiguous ones are refused naming it."""
        if filters.community is None:
            return filters
        return replace(filters, community=self.graph.community_id(filters.community, filters.agent_id))

    def _search_qa_on(self) -> bool:
        return self.config.pipeline.telemetry.memory_search_qa_enabled

    def _record_search(
        self, query: RecallQuery, response: RecallResponse, actor: Actor, route: str,
        started: float,
    ) -> None:
        # After the recall, outside its timing; a failed ledger write never fails the recall.
        entry = search_ledger_entry(query, response, actor, route, started)
        try:
            with self.store.write_tx() as conn:
                qa_sql.record(conn, entry, utc_now())
        except Exception:  # noqa: BLE001 - the ledger is a diagnostic, never a reason to fail
            log.exception("recall QA ledger write failed")

    def search_ledger(
        self, *, agent_id: str | None = None, project: str | None = None,
        since: str | None = None, no_hits: bool | None = None, limit: int = 100, offset: int = 0,
    ) -> dict[str, Any]:
        """The recall QA ledger, newest first; `agent_id` and `project` (a caller's scope)
        restrict it in SQL, None means every agent or project."""
        if not self._search_qa_on():
            raise NotFound(
                "the recall QA ledger is off (memory.pipelineV2.telemetry.memorySearchQaEnabled)",
                code="search_qa_disabled",
            )
        if not 1 <= limit <= 10_000 or offset < 0:
            raise InvalidInput("limit must be between 1 and 10000 and offset not negative")
        if since is not None:
            _check_ts(since, "since")
        rows, total = qa_sql.list_rows(
            self.store.reader(), agent_id=agent_id, project=project, since=since,
            no_hits=no_hits, limit=limit, offset=offset,
        )
        return {"items": rows, "total": total, "limit": limit, "offset": offset}

    # -- sessions and lineage (signet/sessions): thin, so a scoped facade can pass its scope -

    def import_transcript(self, *, scope: MemoryScope | None = None, actor: Actor = Actor(),
                          **request: Any) -> dict[str, Any]:
        """Import a harness transcript (sessions/importer.py); see Sessions.import_transcript."""
        self._check_mutable()
        result = self.sessions.import_transcript(agent_id=actor.agent_id, scope=scope, **request)
        return result.to_dict()

    def session_list(self, *, scope: MemoryScope | None = None, **request: Any) -> dict[str, Any]:
        return self.sessions.list(scope=scope, **request)

    def session_show(
        self, session_id: str, *, scope: MemoryScope | None = None, project: str | None = None
    ) -> dict[str, Any]:
        return self.sessions.show(session_id, scope=scope, project=project)

    def session_search(
        self, query: str, *, scope: MemoryScope | None = None, project: str | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        return self.sessions.search(query, scope=scope, project=project, limit=limit)

    def session_forget(
        self, session_id: str, *, scope: MemoryScope | None = None, project: str | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        self._check_mutable()
        return self.sessions.forget(session_id, scope=scope, project=project, reason=reason)

    def synthesize_memory_md(self, *, now: datetime | None = None) -> dict[str, Any]:
        """Render MEMORY.md from the database now (sessions/synthesis.py); the old one is backed up."""
        self._check_mutable()
        return self.sessions.head.synthesize(now or datetime.now(UTC))

    def reindex_artifacts(self) -> dict[str, Any]:
        """Rebuild memory_artifacts from the markdown files (tombstones honoured)."""
        self._check_mutable()
        return self.sessions.lineage.reindex()

    def threads(self, *, scope: MemoryScope | None = None) -> dict[str, Any]:
        return self.sessions.lineage.threads(scope)

    def thread(self, key: str, *, scope: MemoryScope | None = None, actor: Actor = Actor()) -> dict[str, Any]:
        return self.sessions.lineage.thread(key, scope, actor.agent_id)

    def lineage(self, ref: str, *, scope: MemoryScope | None = None) -> dict[str, Any]:
        """A memory, session or artifact with its lineage up (to the epoch) and down (to the
        transcripts)."""
        return self.sessions.lineage.lineage(ref, scope)

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
        self._check_mutable()
        unknown = set(changes) - set(MODIFIABLE)
        if unknown:
            raise InvalidInput(f"cannot modify field(s): {', '.join(sorted(unknown))}")
        if not changes:
            raise InvalidInput("no changes given")
        current = self.get(memory_id, scope=scope)
        memory_id = current.id  # a short id resolved
        if current.is_deleted:
            raise Conflict(f"memory {memory_id} is deleted; recover it first")
        if scope is not None and scope.project is not None and changes.get("project", scope.project) != scope.project:
            raise Forbidden(f"this token may not move memories out of project {scope.project}")
        columns, norm = self._columns_for(current, changes)
        vector = None
        if norm is not None:
            vector = self._embed_for_write(norm.storage, norm.content_hash, None)
        now = utc_now()
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
        if not self._pipeline_on():
            return
        if memory.source_type != "pipeline":
            jobs_sql.enqueue(conn, "extract", memory_id=memory.id, now=now,
                             max_attempts=self._attempts())
            mem_sql.set_extraction_status(conn, memory.id, "pending", None)
        if self.config.pipeline.hints.enabled:
            jobs_sql.enqueue(conn, "hints", memory_id=memory.id, now=now,
                             max_attempts=self._attempts())

    def _columns_for(self, current: Memory, changes: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        proposed = NewMemory(
            content=changes.get("content", current.content),
            type=changes.get("type", current.type),
            importance=changes.get("importance", current.importance),
            tags=tuple(changes["tags"]) if "tags" in changes else current.tags,
            pinned=bool(changes.get("pinned", current.pinned)),
        )
        if "tags" in changes and not isinstance(changes["tags"], list | tuple):
            raise InvalidInput("tags must be a list of strings")
        valid = self._validated(proposed)
        columns: dict[str, Any] = {}
        norm = None
        for name in changes:
            if name == "content":
                norm = normalize_content(valid.content)
                columns.update(
                    content=norm.storage, normalized_content=norm.normalized,
                    content_hash=norm.content_hash,
                )
            elif name == "tags":
                columns["tags"] = _json_tags(valid.tags)
            elif name == "pinned":
                columns["pinned"] = int(bool(changes["pinned"]))
            elif name in ("type", "importance"):
                columns[name] = getattr(valid, name)
            else:
                columns[name] = _optional_str(changes[name], name)
        return columns, norm

    def forget(
        self,
        memory_id: str,
        *,
        actor: Actor = Actor(),
        force: bool = False,
        reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self._check_mutable()
        now = utc_now()
        with self.store.write_tx() as conn:
            memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
            _check_scope(conn, memory_id, scope)
            current = mem_sql.get(conn, memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            if current.is_deleted:
                return current
            if current.pinned and not force:
                raise Conflict(f"memory {memory_id} is pinned; pass force to forget it")
            mem_sql.soft_delete(conn, memory_id, now)
            history_sql.record(
                conn, memory_id, "deleted", actor, now, old_content=current.content,
                reason=reason, metadata={"force": force} if force else None,
            )
            deleted = mem_sql.get(conn, memory_id)
        assert deleted is not None
        return deleted

    def recover(
        self, memory_id: str, *, actor: Actor = Actor(), reason: str | None = None,
        scope: MemoryScope | None = None,
    ) -> Memory:
        self._check_mutable()
        now = utc_now()
        window = timedelta(milliseconds=self.config.retention.tombstone_retention_ms)
        with self.store.write_tx() as conn:
            memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
            _check_scope(conn, memory_id, scope)
            current = mem_sql.get(conn, memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
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
        text = _optional_str(correction_text, "correction_text")
        if feedback_type == "correction" and not (text or "").strip():
            raise InvalidInput("a correction needs correction_text")
        if text is not None and len(text) > self.config.memory.max_content_chars:
            raise InvalidInput("correction_text is too long")
        with self.store.write_tx() as conn:
            memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
            _check_scope(conn, memory_id, scope)
            if mem_sql.get(conn, memory_id) is None:
                raise NotFound(f"memory {memory_id} not found")
            recorded = feedback_sql.add(
                conn, memory_id=memory_id, feedback_type=feedback_type, correction_text=text,
                session_id=_optional_str(session_id, "session_id") or actor.session_id,
                actor=actor.name, agent_id=actor.agent_id, now=utc_now(),
            )
            if feedback_type == "positive":
                # The agent used it: an access (recall's bounded rehearsal boost reads these);
                # being returned by a search is not one.
                mem_sql.touch(conn, [memory_id], recorded.created_at)
            # Desire paths (seed 003): the traversal path that reached the memory moves.
            self.graph.on_feedback(conn, memory_id, feedback_type, recorded.created_at)
            if feedback_type == "positive":  # a skill that helped is used: its decay restarts
                skills.record_use(conn, memory_id, recorded.created_at)
            return recorded

    # -- pipeline: the app's write path for the workers, the workers, the review queue -------

    def prepare_memory(self, content: str, *, actor: Actor, **fields: Any) -> PreparedMemory:
        """First half of `remember` for the pipeline: validate, normalise, embed (no tx open)."""
        memory = self._new_memory(content, actor, fields)
        norm = normalize_content(memory.content)
        vector = self._embed_for_write(norm.storage, norm.content_hash, None)
        return PreparedMemory(memory, norm, vector, actor)

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult:
        """Second half of `remember`: the same insert transaction (a savepoint when nested)."""
        return self._write_new(prepared.memory, prepared.norm, prepared.vector, prepared.actor)

    def workers(self) -> list[Worker]:
        """The background workers over this app's store and providers (built once)."""
        if self._workers is None:
            cfg = self.config.pipeline
            model = self.embedder.model if self.embedder else None
            self._workers = [
                ExtractWorker(
                    self.store, self.recaller, self, cfg, self.llm,
                    llm_model=self.llm.model if self.llm else None, embedder_model=model,
                ),
                HintsWorker(self.store, cfg, self.llm, self.embedder),
                EmbedWorker(
                    self.store, self.embedder, frozen=cfg.mutations_frozen,
                    batch_size=self.config.embedding.batch_size,
                ),
                self._document_worker(),
                ConnectorWorker(
                    self.connectors, self.config.documents.connector_sync_interval_ms,
                    frozen=cfg.mutations_frozen,
                ),
                ReaperWorker(self.store, cfg.lease_timeout_ms),
                RetentionWorker(self.store, self.config.retention, frozen=cfg.mutations_frozen),
                ScheduledWorker(
                    "skills", lambda now: skills.changed(skills.reconcile(self, now)),
                    interval_ms=self.config.skills.reconcile_interval_ms,
                    enabled=self.config.skills.enabled,
                ),
                ScheduledWorker(
                    "maintenance",
                    lambda now: bool(self.run_maintenance(
                        execute=cfg.autonomous.maintenance_mode == "execute", now=now,
                        trigger="scheduled",
                    )["actions"]),
                    interval_ms=cfg.autonomous.interval_ms, enabled=cfg.autonomous.enabled,
                ),
                SummaryWorker(
                    self.store, self.config.workspace, self.config.sessions, cfg, self,
                    self.llm,
                ),
                # Harnesses that skip session-end: idle sessions are closed and summarised.
                ScheduledWorker(
                    "session-timeout", self.sessions.close_idle, interval_ms=60_000,
                    enabled=cfg.enabled and not cfg.mutations_frozen,
                ),
                # The global head (MEMORY.md), rendered again after an idle gap.
                ScheduledWorker(
                    "synthesis", self.sessions.head.run_if_due, interval_ms=60_000,
                    enabled=not cfg.mutations_frozen,
                ),
            ]
        return self._workers

    def _document_worker(self) -> DocumentWorker:
        docs, cfg = self.config.documents, self.config.pipeline
        policy = FetchPolicy(
            enabled=docs.url_fetch_enabled, max_bytes=docs.fetch_max_bytes,
            timeout_s=docs.fetch_timeout_ms / 1000, max_redirects=docs.fetch_max_redirects,
            allowed_hosts=docs.fetch_allowed_hosts,
        )
        return DocumentWorker(
            self.store, self, chunk_size=cfg.document_chunk_size,
            chunk_overlap=cfg.document_chunk_overlap, fetch_policy=policy,
            max_file_bytes=docs.max_file_bytes,
            max_chunk_chars=self.config.memory.max_content_chars, frozen=cfg.mutations_frozen,
        )

    def run_pipeline_until_idle(
        self, max_rounds: int = 100_000, *, only: Sequence[str] | None = None
    ) -> int:
        """Run the workers (all, or those named in `only`) until none has work; return the
        ticks that did work."""
        chosen = [w for w in self.workers() if only is None or w.name in only]
        return WorkerLoop(chosen).run_until_idle(max_rounds)

    def run_retention(self, *, dry_run: bool = False, now: datetime | None = None) -> RetentionReport:
        """One retention sweep now (workers/retention_worker.py); `dry_run` only counts."""
        if not dry_run:
            self._check_mutable()
        return sweep(self.store, self.config.retention, now or datetime.now(UTC), dry_run=dry_run)

    def review_queue(self, status: str | None = "pending", *, limit: int = 100) -> list[ReviewItem]:
        return review_sql.list_items(self.store.reader(), status, limit=limit)

    def resolve_review(self, review_id: str, approve: bool, actor: Actor = Actor()) -> ReviewItem:
        """Approve (apply the blocked update, cold archive first) or reject a review item."""
        self._check_mutable()
        return resolve_review(
            self.store, self, review_id, approve=approve, actor=actor,
            embedder_model=self.embedder.model if self.embedder else None,
            hints=self._pipeline_on() and self.config.pipeline.hints.enabled, now=utc_now(),
        )

    def jobs(
        self, *, status: str | None = None, job_type: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> list[Job]:
        return jobs_sql.list_jobs(
            self.store.reader(), status=status, job_type=job_type, limit=limit, offset=offset
        )

    def job(self, job_id: str) -> Job:
        conn = self.store.reader()
        found = jobs_sql.get(conn, resolve_prefix(conn, "memory_jobs", job_id, noun="job"))
        if found is None:
            raise NotFound(f"job {job_id} not found")
        return found

    def job_depths(self) -> dict[str, dict[str, int]]:
        """Queue depth: job type -> status -> count."""
        return jobs_sql.depths(self.store.reader())

    def requeue_dead_jobs(self, job_ids: Sequence[str] | None = None) -> int:
        with self.store.write_tx() as conn:
            if job_ids is not None:
                job_ids = [resolve_prefix(conn, "memory_jobs", j, noun="job") for j in job_ids]
            return jobs_sql.requeue_dead(conn, utc_now(), job_ids=job_ids)

    # -- batch operations, repair and diagnostics (signet/batch.py, signet/maintenance.py) ----

    def forget_batch(
        self, *, filters: MemoryFilters = MemoryFilters(), scope: MemoryScope | None = None,
        **request: Any,
    ) -> dict[str, Any]:
        """Preview, then execute with the preview's confirm token; see `batch.forget_batch`.
        A scoped caller matches and forgets only inside its scope."""
        return batch.forget_batch(
            self, filters=_scoped_filters(filters, scope), scope=scope, **request
        )

    def modify_batch(
        self, items: Sequence[dict[str, Any]], *, reason: str | None = None,
        actor: Actor = Actor(), scope: MemoryScope | None = None,
    ) -> dict[str, Any]:
        return batch.modify_batch(self, items, reason=reason, actor=actor, scope=scope)

    def pipeline_status(self) -> dict[str, Any]:
        return maintenance.pipeline_queue(self)

    def release_stale_leases(self, older_than_ms: int | None = None) -> dict[str, Any]:
        return maintenance.release_stale_leases(self, older_than_ms)

    def fts_check(self) -> dict[str, Any]:
        return maintenance.fts_check(self)

    def fts_rebuild(self) -> dict[str, Any]:
        return maintenance.fts_rebuild(self)

    def re_embed(self) -> dict[str, Any]:
        return maintenance.re_embed(self)

    def embeddings_status(self) -> dict[str, Any]:
        return maintenance.embeddings_status(self)

    def embeddings_health(self) -> dict[str, Any]:
        return maintenance.embeddings_health(self)

    def secret_store(self) -> SecretStore:
        """The workspace's encrypted secrets (values resolved into providers only at open)."""
        return SecretStore(self.config.workspace)

    def run_maintenance(
        self, *, execute: bool = False, now: datetime | None = None, trigger: str = "manual"
    ) -> dict[str, Any]:
        """Check the store's health and, with `execute`, repair it (maintenance.py)."""
        return maintenance.run_maintenance(
            self, execute=execute, now=now or datetime.now(UTC), trigger=trigger
        )

    def maintenance_report(self) -> dict[str, Any]:
        return maintenance.maintenance_report(self, datetime.now(UTC))

    def reconcile_skills(self, now: datetime | None = None) -> dict[str, Any]:
        """Bring skill_meta and the skill memories in step with skills/ (skills.py)."""
        return skills.reconcile(self, now or datetime.now(UTC))

    def list_skills(self) -> list[dict[str, Any]]:
        return skills.list_skills(self)

    def show_skill(self, name: str) -> dict[str, Any]:
        return skills.show(self, name)

    def install_skill(self, source: str, *, force: bool = False) -> dict[str, Any]:
        from pathlib import Path

        return skills.install(self, Path(source), datetime.now(UTC), force=force)

    def remove_skill(self, name: str) -> dict[str, Any]:
        return skills.remove(self, name, datetime.now(UTC))

    def effective_config(self) -> dict[str, Any]:
        return effective_config(self.config)

    def identity_file(self, name: str) -> dict[str, Any]:
        return read_identity(self.config, name)

    def write_identity_file(self, name: str, content: str) -> dict[str, Any]:
        self._check_mutable()
        return write_identity(self.config, name, content)

    # -- status -----------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        conn = self.store.reader()
        return {
            "workspace": str(self.config.workspace),
            "database": str(self.config.db_path),
            "memories": mem_sql.count_live(conn),
            "embedder": (
                {"provider": self.embedder.name, "model": self.embedder.model,
                 "dimensions": self.embedder.dimensions,
                 # The query embedding's circuit breaker: "open" means recall runs without
                 # the semantic channel until the provider answers again.
                 "health": self.recaller.guard.snapshot() if self.recaller.guard else None}
                if self.embedder else None
            ),
            "degraded": (
                ["embedder"] if self.recaller.guard and self.recaller.guard.degraded else []
            ),
            "embeddings": emb_sql.audit(conn, self.embedder.model) if self.embedder else None,
            "pipeline": {"enabled": self.config.pipeline.enabled,
                         "mutationsFrozen": self.config.pipeline.mutations_frozen,
                         "extraction": extraction_mode(
                             self.config.llm.provider != "none",
                             self.config.pipeline.min_fact_confidence_for_write)},
            "maintenance": maintenance.status_summary(self),
        }

    # -- helpers ----------------------------------------------------------------------------

    def _check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen("mutations are frozen (memory.pipelineV2.mutationsFrozen)")

    def _pipeline_on(self) -> bool:
        return self.config.pipeline.enabled and not self.config.pipeline.mutations_frozen

    def _attempts(self) -> int:
        return self.config.pipeline.max_attempts

    def _extracts(self, memory: NewMemory) -> bool:
        # A fact the pipeline wrote is not extracted again: that would loop on itself.
        # A skill's memory is its own SKILL.md: nothing to extract from instructions.
        return self._pipeline_on() and memory.source_type not in ("pipeline", "skill")


def _check_scope(conn: Any, memory_id: str, scope: MemoryScope | None) -> None:
    """NotFound (not Forbidden: its existence must not leak) for a memory outside `scope`;
    checked in SQL before the memory's row is read."""
    if scope is not None and not scope_sql.contains(conn, memory_id, scope):
        raise NotFound(f"memory {memory_id} not found")


def _scoped_filters(filters: MemoryFilters, scope: MemoryScope | None) -> MemoryFilters:
    """`filters` narrowed to `scope`; Forbidden when they name another agent or project."""
    if scope is None:
        return filters
    for name in ("agent_id", "project"):
        allowed, asked = getattr(scope, name), getattr(filters, name)
        if allowed is not None and asked is not None and asked != allowed:
            raise Forbidden(f"this token is scoped to {name} {allowed!r}")
    return replace(
        filters, agent_id=scope.agent_id or filters.agent_id,
        project=scope.project or filters.project, isolated=True,
    )


def _scoped_write(
    scope: MemoryScope, actor: Actor, fields: dict[str, Any]
) -> tuple[Actor, dict[str, Any]]:
    """A scoped caller's memory lands in its agent and project."""
    if scope.project is not None:
        if fields.get("project") not in (None, scope.project):
            raise Forbidden(f"this token may write only to project {scope.project!r}")
        fields = {**fields, "project": scope.project}
    if scope.agent_id is not None:
        actor = replace(actor, agent_id=scope.agent_id)
    return actor, fields


def _key_space(key: str | None, scope: MemoryScope | None) -> idem_sql.KeySpace | None:
    """An idempotency key in the namespace of the caller's scope (structured, so no two scopes
    share keys and no key can spell another scope's namespace)."""
    if key is None:
        return None
    _check_key(key)
    if scope is None:
        return idem_sql.KeySpace(key)
    return idem_sql.KeySpace(key, scope.agent_id, scope.project)


def _replay(conn: Any, space: idem_sql.KeySpace, norm: Any) -> RememberResult | None:
    """The first answer under the key, for a retry of the same content; a Conflict that names
    nothing of the first request when the content differs."""
    recorded = idem_sql.get(conn, space)
    if recorded is None:
        return None
    if recorded.content_hash != norm.content_hash:
        raise Conflict(
            "this idempotency_key was already used for different content; use a new key",
            code="idempotency_key_reused",
        )
    return _replayed(recorded.response)


def _api_key(config: Config, section: str) -> str:
    """The section's API key: `api_key` (secret:NAME, resolved from the secret store now, at
    start) or else the environment variable `api_key_env` names. Never logged."""
    import os

    chosen = getattr(config, section)
    if chosen.api_key:
        return SecretStore(config.workspace).resolve(chosen.api_key, f"{section}.api_key")
    return os.environ.get(chosen.api_key_env, "") if chosen.api_key_env else ""


def configured_embedder(config: Config) -> Embedder | None:
    """The embedder `config` names (None for provider none); the benchmarks wrap it in a cache."""
    return _configured_embedder(config)


def _configured_embedder(config: Config) -> Embedder | None:
    e = config.embedding
    return make_embedder(
        e.provider, model=e.model, dimensions=e.dimensions, base_url=e.base_url,
        api_key=_api_key(config, "embedding") if e.provider in ("ollama", "openai") else "",
        timeout_s=e.timeout_ms / 1000, batch_size=e.batch_size, threads=e.threads,
    )


def _configured_llm(config: Config, usage_sink: Any = None) -> LLM | None:
    c = config.llm
    return make_llm(
        c.provider, model=c.model, base_url=c.base_url, timeout_ms=c.timeout_ms,
        api_key=_api_key(config, "llm") if c.provider != "none" else "",
        command=c.command, max_calls_per_hour=c.max_calls_per_hour, burst=c.burst,
        max_tokens=c.max_tokens, usage_sink=usage_sink,
    )


def search_ledger_entry(
    query: RecallQuery, response: RecallResponse, actor: Actor, route: str, started: float
) -> dict[str, Any]:
    """One recall QA ledger row: the query, its filters, what came back and how fast."""
    from signet.store.fts import query_tokens

    filters = {k: v for k, v in vars_of(query.filters).items() if v not in (None, (), False)}
    hits = response.hits
    channels: dict[str, int] = {}
    for hit in hits:
        for name, value in vars_of(hit.evidence).items():
            if value is not None:
                channels[name] = channels.get(name, 0) + 1
    return {
        "route": route, "agent_id": actor.agent_id, "session_key": actor.session_id,
        "project": query.filters.project, "query": query.query,
        "keyword_query": " ".join(query_tokens(query.query)) or None,
        "filters_json": filters, "method": response.method, "result_count": len(hits),
        "top_score": round(hits[0].score, 6) if hits else None, "no_hits": not hits,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "timings_json": response.timings_ms,
        "results_json": [
            {"id": h.memory.id, "score": round(h.score, 6), "type": h.memory.type,
             "content": h.memory.content[: qa_sql.SNAPSHOT_CHARS]}
            for h in hits
        ],
        "sources_json": channels,
    }


def vars_of(value: Any) -> dict[str, Any]:
    """A slotted dataclass's fields as a dict (tuples kept as lists for JSON)."""
    return {
        name: list(v) if isinstance(v := getattr(value, name), tuple) else v
        for name in value.__dataclass_fields__
    }


def _apply_prefixes(content: str) -> tuple[str, dict[str, Any]]:
    """`critical:` pins with importance 1; `[a,b]:` sets tags. Either order, once each."""
    fields: dict[str, Any] = {}
    for _ in range(2):
        if "pinned" not in fields and _CRITICAL.match(content):
            content = _CRITICAL.sub("", content, count=1)
            fields.update(pinned=True, importance=1.0)
        match = _TAG_PREFIX.match(content)
        if "tags" not in fields and match:
            fields["tags"] = tuple(t.strip() for t in match.group(1).split(",") if t.strip())
            content = content[match.end():]
    return content, fields


def _without(item: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != key}


def _check_text(value: Any, name: str = "") -> None:
    """InvalidInput naming the field when any string in `value` is not valid Unicode (a lone
    surrogate, which JSON can spell and SQLite cannot store): refused before anything is
    written, whatever the adapter."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                f"{name or 'a field'} is not valid Unicode text (holds a lone surrogate)"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, name or str(key))
            _check_text(item, name or str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            _check_text(item, name)


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key.strip() or len(key) > 200:
        raise InvalidInput("idempotency_key must be a non-empty string of at most 200 characters")


def _result_json(result: RememberResult) -> str:
    from signet.types import dumps

    return dumps({"id": result.id, "deduped": result.deduped, "embedded": result.embedded,
                  "memory": result.memory.to_dict()})


def _replayed(response: str) -> RememberResult:
    """The result recorded under an idempotency key: the first call's answer, as it was."""
    data = json.loads(response)
    fields = {k: v for k, v in data["memory"].items() if k in Memory.__dataclass_fields__}
    memory = Memory(**{**fields, "tags": tuple(fields["tags"])})
    return RememberResult(data["id"], data["deduped"], memory, embedded=data["embedded"])


def _clean_tags(tags: Sequence[Any], max_tags: int) -> tuple[str, ...]:
    if isinstance(tags, str):
        tags = [t for t in tags.split(",")]
    if not isinstance(tags, list | tuple):
        raise InvalidInput("tags must be a list of strings")
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput("tags must be a list of strings")
        tag = tag.strip()
        if tag and tag not in cleaned:
            cleaned.append(tag[:100])
    if len(cleaned) > max_tags:
        raise InvalidInput(f"at most {max_tags} tags")
    return tuple(cleaned)


def _json_tags(tags: Sequence[str]) -> str:
    from signet.types import dumps

    return dumps(list(tags))


def _optional_str(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidInput(f"{name} must be a string")


def _check_ts(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be an ISO-8601 date or date-time string")
    try:
        parse_ts(value)
    except ValueError as exc:
        raise InvalidInput(f"{name} is not an ISO-8601 date or date-time: {value!r}") from exc
