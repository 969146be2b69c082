"""The composition root on a shared store: `SignetApp` with `store.backend: postgres`.

`SignetApp.open` (app.py) builds this when the configured backend is not SQLite. It is the same
app to every adapter (daemon, MCP, CLI), wired over the store seam (store/backend.py
`CoreStore`) instead of the SQLite Store:

- the memory operations (remember, get, list, history, modify, forget, recover, feedback,
  batch forget and modify, skills) are SignetApp's own, on THE memory service
  (services/memory.py) built over the seam: `SHARED` names them, CoreApp inherits them;
- the knowledge graph is the same `KnowledgeGraph` (graph/service.py) as on SQLite, over the
  PostgreSQL graph store (store/postgres/graph.py): entities, pins, communities, stats,
  `apply_graph`, the community filter, and recall's graph channels (its ranking hooks);
- recall is THE Recaller (recall/hybrid.py) of the SQLite app, over the PostgreSQL recall
  reads (store/postgres/recall_reads.py): the same channels (lexical BM25, dated windows,
  hints, the dense channel, whole sources, the graph's), fusion, context, dampening,
  crowding and confidence, scope in the SQL;
- the workers are the extraction and hints workers (workers/extract_worker.py, hints_worker.py:
  the same workers as on SQLite, over the pipeline's seam, store/pipeline.py; the pipeline's
  writes go through the memory service's `prepare_memory` + `write_prepared`, inside the
  worker's one transaction), then the embed worker and the stale-lease reaper on the seam
  (workers/core_workers.py): jobs are leased with SKIP LOCKED, so several daemons share the
  queue and each job runs once;
- tokens: `token_authority` signs with the key stored in the database, so a token issued by
  one daemon is accepted by every other;
- sessions and transcripts: the lineage service itself (sessions/service.py `Sessions`) over
  the store's sessions tables (store/session_store.py; PgSessions on PostgreSQL), with the
  idle-session sweep and MEMORY.md synthesis as scheduled workers (synthesis one daemon at a
  time, under an advisory lock);
- the projection and export/import are the SQLite app's services (projection/service.py,
  portable/bundle.py) over the PostgreSQL implementations of their store protocols
  (store/postgres/projection.py, store/postgres/portable.py).
- documents and connectors: the document service, its worker and the folder connectors
  themselves over the documents' tables (store/document_store.py; PgDocuments), chunks
  written by the memory service inside the chunk set's transaction;
- the recall QA ledger: the same ledger service (services/search_ledger.py) over PgLedger; a
  recall writes its row after it answers, as on SQLite;
- jobs, pipeline status, repair, maintenance and retention: the same services as the SQLite
  app (services/queues.py `JobQueue`, signet/maintenance.py on services/operations.py) over
  the operations seam (store/operations.py; `PgOps`); the retention and maintenance workers
  run here too, a retention sweep under an advisory lock (one daemon sweeps at a time).

Everything else the app offers needs tables not on the seam yet (store/backend.py NOT_PORTED).
Each such operation is refused by name, `NotOnBackend` (HTTP 501, `not_on_backend`), never
answered from nothing: `UNPORTED` maps every one to its feature, and the services the SQLite
app holds (projection, the search ledger, ...) are `Unported` stand-ins that refuse any use.
tests/core/test_core_app.py checks that every public operation of SignetApp is either written
here or listed in `UNPORTED`, so a new operation cannot silently run SQLite code here.

In-process caches, and why none serves stale data across daemons:
- the vector index: none. The SQLite app keeps vectors in RAM (recall/vectors.py); here every
  vector search is a statement on the shared database (pgvector), so another daemon's vector
  is found by the next search;
- the graph's entity-word index (graph/channels.py `EntityWords`): rebuilt whenever the
  agent's entity marker (count, highest `seq`), read from the database on every query, moves,
  so another daemon's new entity is matched by the next recall;
- the hub threshold (graph/hubs.py `HubIndex`): a percentile of entity degrees cached for
  30 s; another daemon's writes move it within that time (a percentile over a sample, which a
  few new entities barely move);
- the traversal paths kept for desire-path feedback (graph/traversal.py `PathMemory`): per
  daemon by design (feedback is not on this backend yet);
- the query-vector cache (providers/query_embeddings.py): keyed by the query text and the
  embedder, whose vector for a text never changes; nothing another daemon writes can make it
  stale;
- accesses (reads and `touch` recalls) wait in an in-process buffer (store/accesses.py) until
  its flush, within a second, adds them in the database (`access_count + n`): a count, never a
  copy of a row, so nothing is served from it; another daemon sees them after that flush;
- tokens: every request verifies against the `tokens` row (no cache), so a revocation by one
  daemon holds at the next request to any; the signing key is read once at start (it never
  changes: `signing_keys` is insert-once); `guards.Authenticate` throttles only the
  `last_used_at` write;
- the embedding projection (projection/service.py): its cache is the `umap_cache` table of the
  shared database, checked against the slice's live vector count on every request, so a map
  another daemon's writes made stale is computed again; in process only the threads under way
  are held (so one daemon does not start the same computation twice);
- the embed worker's held leases (job id, leased_at of its running tick): this daemon's own,
  released at shutdown if a tick outlives the stop; emptied when the tick ends;
- the retention and maintenance workers' last-run times: this daemon's schedule only (the
  sweep's lock is in the database);
- rate limits and MCP session caps are per daemon by design (a limit per process behind a
  balancer, documented in docs/deploy.md).
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NoReturn, Self

from signet import maintenance
from signet.clock import Clock, SystemClock, stamp
from signet.config import Config
from signet.connectors.folder import ConnectorWorker, FolderConnectors
from signet.documents.service import DocumentService
from signet.graph.service import KnowledgeGraph
from signet.projection.service import ProjectionService
from signet.providers.embedder import Embedder
from signet.providers.guard import ProviderGuard
from signet.providers.llm import LLM
from signet.recall.hybrid import Recaller
from signet.recall.spec import RankingSpec
from signet.services.delegate import Delegate
from signet.services.memory import MemoryService
from signet.services.operations import Operations
from signet.services.queues import JobQueue, ReviewQueue
from signet.services.scope import scoped_filters
from signet.services.search_ledger import SearchLedger
from signet.services.write_policy import pipeline_brief
from signet.sessions.service import Sessions
from signet.store.accesses import AccessRecorder
from signet.store.backend import CoreStore, NotOnBackend, open_core
from signet.store.document_store import DocumentStore
from signet.store.injections import InjectionStore, injections_on
from signet.store.operations import ops_for
from signet.store.pipeline import pipeline_for
from signet.store.portable import PortableStore, portable_on
from signet.store.projection import projection_on
from signet.store.search_telemetry import LedgerStore
from signet.store.session_store import sessions_on
from signet.store.signing_key import workspace_key_path
from signet.telemetry import Telemetry
from signet.types import (
    Actor,
    MemoryFilters,
    MemoryScope,
    RecallQuery,
    RecallResponse,
)
from signet.worker_list import (
    document_worker,
    operations_workers,
    session_workers,
    skills_worker,
)
from signet.workers.core_workers import CoreEmbedWorker, CoreReaperWorker
from signet.workers.extract_worker import ExtractWorker
from signet.workers.hints_worker import HintsWorker
from signet.workers.loop import Worker, WorkerLoop
from signet.workers.summary_worker import PreparedWrites

# Every public operation of SignetApp not written in CoreApp, and the feature it needs.
UNPORTED: dict[str, str] = {
}
# SignetApp's operations that run on this backend as written there: over `app.memory`, the one
# memory service, which runs on the seam.
SHARED = (
    "remember", "get", "list", "history", "modify", "forget", "recover", "feedback",
    "remember_many", "prepare_memories", "prepare_memory", "write_prepared",
    "forget_batch", "modify_batch", "flush_accesses", "reconcile_skills", "list_skills",
    "show_skill", "install_skill", "remove_skill",
)
# The services the SQLite app holds, each standing for the feature it carries.
UNPORTED_PARTS: dict[str, str] = {
    "store": "the SQLite store",
}


class Unported:
    """A stand-in for a service whose tables are not on this backend: any use is refused."""

    def __init__(self, feature: str, backend: str) -> None:
        object.__setattr__(self, "_refusal", (feature, backend))

    def __getattr__(self, name: str) -> NoReturn:
        feature, backend = object.__getattribute__(self, "_refusal")
        raise NotOnBackend(feature, backend)

    def __bool__(self) -> bool:
        return False


def _refuse(name: str, feature: str) -> Callable[..., NoReturn]:
    def refused(self: Any, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise NotOnBackend(feature, self.core.backend)

    refused.__name__ = name
    refused.__doc__ = f"Not on this store backend: {feature} (store/backend.py NOT_PORTED)."
    return refused


class CoreAppOps:
    """The operations of the app on a shared store; app.py's `CoreApp` puts them before
    SignetApp's (so every adapter takes it for a SignetApp)."""

    config: Config
    core: CoreStore
    recaller: Recaller
    memory: MemoryService
    sessions: Sessions
    ledger: SearchLedger
    documents: DocumentService
    connectors: FolderConnectors
    projection: ProjectionService
    portable: PortableStore
    injections: InjectionStore
    graph: KnowledgeGraph
    embedder: Embedder | None
    clock: Clock
    _workers: builtins.list[Worker] | None

    def __init__(  # noqa: PLR0913 - the parts the root wired
        self, config: Config, core: CoreStore, embedder: Embedder | None,
        recaller: Recaller, memory: MemoryService, clock: Clock,
        telemetry: Telemetry, llm: LLM | None,
    ) -> None:
        self.config = config
        self.core = core
        self.embedder = embedder
        self.recaller = recaller
        self.vectors = None
        self.notes: builtins.list[str] = []
        self.llm = llm
        self.clock = clock
        self.telemetry = telemetry
        # Batch-forget confirm tokens (signet/batch.py) verify on every daemon of the database:
        # their key is derived from the shared signing key.
        self.batch_key = hmac.new(core.signing_key(), b"signet batch confirm",
                                  hashlib.sha256).digest()
        self._workers = None
        self.memory = memory
        self.graph = memory.graph
        self.operations = Operations(config, ops_for(core), embedder, clock, llm, recaller.guard)
        self.job_queue = JobQueue(self.operations.ops, clock)
        for name, feature in UNPORTED_PARTS.items():
            setattr(self, name, Unported(feature, core.backend))
        # The lineage: the same service as on SQLite, over the store's sessions tables; recall's
        # `expand` reads the transcripts through it.
        self.sessions = Sessions(config, sessions_on(core), clock)
        self.recaller = replace(recaller, transcripts=self.sessions.excerpts)
        self.projection = ProjectionService(
            projection_on(core), embedder.model if embedder else None,
            embedder.dimensions if embedder else None, clock,
        )
        self.portable = portable_on(core)
        self.injections = injections_on(core)  # the hooks' ledger, shared by every daemon
        # The review queue: the same service as on SQLite, over the pipeline's seam.
        self.reviews = ReviewQueue(config, memory, pipeline_for(core),
                                   embedder.model if embedder else None, clock)

    @classmethod
    def build(
        cls, config: Config, embedder: Embedder | None, llm: LLM | None, clock: Clock | None,
        telemetry: Telemetry, guard: ProviderGuard | None,
    ) -> Self:
        """Open the configured shared store and wire the app over it."""
        clock = clock or SystemClock()
        core = open_core(config.store, sqlite_path=config.db_path,
                         key_path=workspace_key_path(config.workspace))
        graph = KnowledgeGraph.build(
            core.graph(), config.pipeline, embedder.model if embedder else None, clock
        )
        accesses = AccessRecorder(core.add_accesses, clock=clock)
        # The one Recaller (recall/hybrid.py) over this store's recall reads.
        recaller = Recaller(
            core.recall_reads(embedder.model if embedder else None), config.search,
            RankingSpec.of(config.search, graph.hooks()), embedder, guard=guard, clock=clock,
            accesses=accesses,
        )
        memory = MemoryService(
            config, Unported("the SQLite store", core.backend), core,  # type: ignore[arg-type]
            embedder, None, graph, accesses, clock,
        )
        app = cls(config, core, embedder, recaller, memory, clock, telemetry, llm)
        app.documents = DocumentService(
            _documents_store(core, memory), config.documents,
            max_attempts=config.pipeline.max_attempts, frozen=config.pipeline.mutations_frozen,
            clock=clock,
        )
        app.connectors = FolderConnectors(app.documents)
        app.ledger = SearchLedger(config, _ledger_store(core), clock)
        return app

    # -- memories: SignetApp's (SHARED), on `self.memory`; recall is the seam's ----------
    def recall(
        self, query: RecallQuery, *, actor: Actor | None = None, route: str = "recall",
        scope: MemoryScope | None = None,
    ) -> RecallResponse:
        if scope is not None:
            query = replace(query, filters=scoped_filters(query.filters, scope))
        if query.filters.community is not None:
            query = replace(query, filters=self.graph.community_filter(query.filters))
        if query.touch and self.config.pipeline.mutations_frozen:
            query = replace(query, touch=False)
        started = time.perf_counter()
        response = self.recaller.recall(query)
        self.ledger.record(query, response, actor or Actor(), route, started)
        return response

    search_ledger = Delegate("ledger", SearchLedger.page)

    # -- sessions and lineage: the lineage service itself (sessions/service.py) ----------
    import_transcript = Delegate("sessions", Sessions.import_for)
    session_list = Delegate("sessions", Sessions.list)
    session_show = Delegate("sessions", Sessions.show)
    session_search = Delegate("sessions", Sessions.search)
    session_forget = Delegate("sessions", Sessions.forget)
    synthesize_memory_md = Delegate("sessions", Sessions.synthesize)
    reindex_artifacts = Delegate("sessions", Sessions.reindex)
    threads = Delegate("sessions", Sessions.threads)
    thread = Delegate("sessions", Sessions.thread)
    lineage = Delegate("sessions", Sessions.lineage_of)

    # -- the review queue: the same service, over the pipeline's seam ---------------------
    review_queue = Delegate("reviews", ReviewQueue.items)
    resolve_review = Delegate("reviews", ReviewQueue.resolve)

    # -- workers, tokens, status, lifecycle ------------------------------------------
    def workers(self) -> builtins.list[Worker]:
        if self._workers is None:
            pipeline, llm = self.config.pipeline, self.llm
            model = self.embedder.model if self.embedder else None
            seam = pipeline_for(self.core)
            self._workers = [
                ExtractWorker(seam, self.recaller, self.memory, pipeline, llm,
                              llm_model=llm.model if llm else None, embedder_model=model,
                              graph=self.core.graph()),
                HintsWorker(seam, pipeline, llm, self.embedder),
                CoreEmbedWorker(self.core, self.embedder, frozen=pipeline.mutations_frozen,
                                batch_size=self.config.embedding.batch_size),
                document_worker(self.config, self.documents.docs, self.memory),
                ConnectorWorker(self.connectors, self.config.documents.connector_sync_interval_ms,
                                frozen=pipeline.mutations_frozen),
                CoreReaperWorker(self.core, pipeline.lease_timeout_ms),
                *session_workers(self.sessions, self.config, PreparedWrites(self.memory),
                                 self.llm),
                *operations_workers(self.operations),
                skills_worker(self.memory, self.config),
            ]
        return self._workers

    def run_pipeline_until_idle(
        self, max_rounds: int = 100_000, *, only: Sequence[str] | None = None
    ) -> int:
        chosen = [w for w in self.workers() if only is None or w.name in only]
        return WorkerLoop(chosen, clock=self.clock).run_until_idle(max_rounds)

    def token_authority_store(self) -> CoreStore:
        return self.core

    def release_worker_leases(self) -> int:
        # Only this daemon's own: the jobs its workers leased in a tick the shutdown cut off,
        # each while still at that lease (other daemons' leases on the shared queue stay).
        held = dict(self.core.held_leases())  # every worker's lease through the store's
        held.update(pair for w in self._workers or [] if isinstance(w, CoreEmbedWorker)
                    for pair in w.held_leases())
        pairs = list(held.items())
        return self.operations.ops.release_leases(stamp(self.clock), pairs) if pairs else 0

    def checkpoint(self) -> None:
        return None  # PostgreSQL has no WAL file of ours to fold back

    def status(self) -> dict[str, Any]:
        from signet.store.postgres.core import redact  # psycopg: the optional extra

        _items, live = self.core.list_memories(MemoryFilters(), limit=1, offset=0)
        embedder, guard = self.embedder, self.recaller.guard
        return {
            "workspace": str(self.config.workspace), "backend": self.core.backend,
            "database": redact(self.config.store.url or ""), "memories": live,
            "embedder": (
                {"provider": embedder.name, "model": embedder.model,
                 "dimensions": embedder.dimensions,
                 "health": guard.snapshot() if guard else None}
                if embedder else None
            ),
            "degraded": ["embedder"] if guard and guard.degraded else [],
            "pipeline": pipeline_brief(self.config),
            "embeddings": self.operations.ops.embedding_audit(embedder.model) if embedder else None,
            "maintenance": maintenance.status_summary(self.operations),
            "not_on_backend": list(sorted(set(UNPORTED.values()))),
        }

    def close(self) -> None:
        self.projection.close()  # its threads write to the store: they stop before it closes
        if self.recaller.query_embeddings is not None:
            self.recaller.query_embeddings.close()
        self.memory.accesses.close()  # the accesses still buffered, written before closing
        self.core.close()


def _ledger_store(core: CoreStore) -> LedgerStore:
    """The recall QA ledger's table on the shared store (store/postgres/search_telemetry.py)."""
    from signet.store.postgres.core import PgCore  # the optional extra: imported when used
    from signet.store.postgres.search_telemetry import PgLedger

    if not isinstance(core, PgCore):
        raise NotOnBackend("search ledger", core.backend)
    return PgLedger(core)


def _documents_store(core: CoreStore, memory: MemoryService) -> DocumentStore:
    """The documents' tables on the shared store (store/postgres/documents.py); chunks are
    written by the memory service, inside the chunk set's transaction."""
    from signet.store.postgres.core import PgCore  # the optional extra: imported when used
    from signet.store.postgres.documents import PgDocuments

    if not isinstance(core, PgCore):
        raise NotOnBackend("documents and connectors", core.backend)
    return PgDocuments(core, memory.write_prepared)


for _name, _feature in UNPORTED.items():
    setattr(CoreAppOps, _name, _refuse(_name, _feature))
