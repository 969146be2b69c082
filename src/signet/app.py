"""The composition root: opens the configured store `Backend` (store/backend.py) once, wires
the services over the seams it hands out, and exposes the operations every adapter calls.

The app's `remember`, `get`, `modify`, ... are the memory service's own methods (`Delegate`),
so there is one write path whoever calls. Time comes from one clock chosen here.
"""

from __future__ import annotations

import builtins
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from signet.clock import Clock, SystemClock, stamp
from signet.config import Config
from signet.config_view import effective_config
from signet.graph.service import KnowledgeGraph
from signet.identity import read_identity, write_identity
from signet.services.delegate import Delegate, deferred_names
from signet.services.memory import MemoryService
from signet.services.scope import scoped_filters
from signet.store.accesses import AccessRecorder
from signet.store.backend import Backend, CoreStore
from signet.store.signing_key import workspace_key_path
from signet.telemetry import Telemetry
from signet.types import Actor, MemoryFilters, MemoryScope, RecallQuery, RecallResponse

# What only some operations use is imported on first use: an app opened `lazy` for one read
# (the CLI without a daemon) imports neither recall, the workers nor the maintenance code.
# mypy sees the real names; at run time the Delegates' targets are `Deferred`.
if TYPE_CHECKING:
    from signet import batch, maintenance, skills
    from signet.connectors.folder import FolderConnectors
    from signet.documents.service import DocumentService
    from signet.projection.service import ProjectionService
    from signet.providers.embedder import Embedder
    from signet.providers.guard import query_guard
    from signet.providers.llm import LLM
    from signet.recall.hybrid import Recaller
    from signet.recall.spec import RankingSpec
    from signet.recall.vectors import VectorSearch
    from signet.secret_store import SecretStore
    from signet.services.operations import Operations
    from signet.services.queues import JobQueue, ReviewQueue
    from signet.services.search_ledger import SearchLedger
    from signet.sessions.service import Sessions
    from signet.store.db import Store
    from signet.store.injections import InjectionStore
    from signet.store.portable import PortableStore
    from signet.workers.loop import Worker
else:
    globals().update(deferred_names(
        "signet.batch", "signet.maintenance", "signet.skills", "signet.secret_store:SecretStore",
        "signet.services.queues:JobQueue", "signet.services.queues:ReviewQueue",
        "signet.services.search_ledger:SearchLedger", "signet.sessions.service:Sessions",
        "signet.connectors.folder:FolderConnectors", "signet.documents.service:DocumentService",
        "signet.projection.service:ProjectionService", "signet.recall.hybrid:Recaller",
        "signet.recall.spec:RankingSpec", "signet.providers.guard:query_guard",
        "signet.services.operations:Operations",
    ))

# Built by `_wire`: at open, or (`lazy`) when one of them is first used.
WIRED = frozenset({"recaller", "projection", "portable", "injections", "sessions", "documents",
                   "connectors", "ledger", "operations", "job_queue", "reviews"})


@dataclass
class SignetApp:
    config: Config
    backend: Backend  # the one opened store; every store seam comes from it
    embedder: Embedder | None
    vectors: VectorSearch | None = None
    notes: list[str] = field(default_factory=list)
    llm: LLM | None = None
    graph: KnowledgeGraph = field(init=False, repr=False)
    recaller: Recaller = field(init=False, repr=False)
    projection: ProjectionService = field(init=False, repr=False)
    portable: PortableStore = field(init=False, repr=False)  # export and import's rows
    injections: InjectionStore = field(init=False, repr=False)  # the hooks' ledger
    sessions: Sessions = field(init=False, repr=False)
    documents: DocumentService = field(init=False, repr=False)
    connectors: FolderConnectors = field(init=False, repr=False)
    memory: MemoryService = field(init=False, repr=False)
    ledger: SearchLedger = field(init=False, repr=False)
    job_queue: JobQueue = field(init=False, repr=False)
    operations: Operations = field(init=False, repr=False)
    reviews: ReviewQueue = field(init=False, repr=False)
    clock: Clock = field(default_factory=SystemClock, repr=False)
    _workers: list[Worker] | None = field(default=None, repr=False)
    # The embed worker's (services/providers.py `worker_embedder`), closed with the app.
    _worker_embedder: Embedder | None = field(default=None, repr=False)
    # Local operational telemetry (signet/telemetry.py): the daemon's middleware and the LLM's
    # usage sink feed it. The batch key signs batch-forget confirm tokens (signet/batch.py).
    telemetry: Telemetry = field(default_factory=Telemetry, repr=False)
    batch_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)

    # -- lifecycle --------------------------------------------------------------------------

    @classmethod
    def open(
        cls, config: Config, *, embedder: Embedder | None | str = "config",
        llm: LLM | None | str = "config", clock: Clock | None = None, lazy: bool = False,
    ) -> SignetApp:
        """Open `store.backend`; `embedder`, `llm`, `clock` override the configured ones.
        `lazy`: the memory service now, the rest at the first use of one (a process making one
        call from one thread: the CLI without a daemon; the daemon wires all at open)."""
        from signet.services.providers import configured_embedder, configured_llm
        from signet.store.choose import open_backend

        # secret:NAME keys resolve before anything opens: a missing one leaves nothing open.
        telemetry = Telemetry(
            enabled=config.telemetry.enabled, error_ring_size=config.telemetry.error_ring_size
        )
        chosen = configured_embedder(config) if isinstance(embedder, str) else embedder
        chosen_llm = configured_llm(config, telemetry.record_llm) if isinstance(llm, str) else llm
        backend = open_backend(config.store, sqlite_path=config.db_path,
                               key_path=workspace_key_path(config.workspace))
        try:
            return cls.build(config, backend, chosen, chosen_llm, clock or SystemClock(),
                             telemetry, lazy=lazy)
        except BaseException:
            backend.close()
            raise

    @classmethod
    def build(
        cls, config: Config, backend: Backend, embedder: Embedder | None, llm: LLM | None,
        clock: Clock, telemetry: Telemetry, *, lazy: bool = False,
    ) -> SignetApp:
        """Wire the services over `backend`'s seams (`lazy`: see `open`)."""
        from signet.recall.vectors import VectorSearch

        vectors = (VectorSearch.of(config.embedding, embedder, backend.file())
                   if embedder and backend.local_vectors else None)
        app = cls(config, backend, embedder, vectors, clock=clock, llm=llm,
                  telemetry=telemetry, batch_key=backend.batch_key())
        model = embedder.model if embedder else None
        app.graph = KnowledgeGraph.build(backend.graph(), config.pipeline, model, clock)
        accesses = AccessRecorder(backend.core.add_accesses, clock=clock)  # reads' and recall's
        app.memory = MemoryService(config, backend.core, embedder, vectors, app.graph, accesses,
                                   clock)
        if not lazy:
            app._wire()
        if embedder is not None and (changed := app.memory.mark_stale_vectors()):
            app.notes.append(f"{changed} vectors from another model marked stale")
        return app

    def _wire(self) -> None:
        vars(self)["_wired"] = True  # first, so a failure here cannot recurse
        config, backend, embedder, clock = self.config, self.backend, self.embedder, self.clock
        model = embedder.model if embedder else None
        dims = embedder.dimensions if embedder else None
        # The lineage (signet/sessions): recall's `expand` reads transcripts through it.
        self.sessions = Sessions(config, backend.sessions(), clock)
        # The one Recaller, built once from one ranking spec (recall/spec.py); frozen after.
        guard = query_guard(config.search, inline=embedder.inline) if embedder else None
        self.recaller = Recaller(
            backend.recall_reads(model, self.vectors), config.search,
            RankingSpec.of(config.search, self.graph.hooks()), embedder,
            transcripts=self.sessions.excerpts, guard=guard, clock=clock,
            accesses=self.memory.accesses,
        )
        self.projection = ProjectionService(backend.projection(), model, dims, clock)
        self.portable, self.injections = backend.portable(), backend.injections()
        self.documents = DocumentService(
            backend.documents(self.memory.write_prepared), config.documents,
            max_attempts=config.pipeline.max_attempts, frozen=config.pipeline.mutations_frozen,
            clock=clock,
        )
        self.connectors = FolderConnectors(self.documents)
        self.ledger = SearchLedger(config, backend.ledger(), clock)
        self.ledger.ensure()
        self.operations = Operations(config, backend.operations(), embedder, clock, self.llm,
                                     guard)
        self.job_queue = JobQueue(self.operations.ops, clock)
        self.reviews = ReviewQueue(config, self.memory, backend.pipeline(), model, clock)

    if not TYPE_CHECKING:  # mypy keeps checking every attribute name

        def __getattr__(self, name: str) -> Any:
            if name in WIRED and not vars(self).get("_wired"):
                self._wire()
                return getattr(self, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def store(self) -> Store:
        """The workspace's SQLite file (backup, file-level benchmarks); NotOnBackend on a
        store that is not one."""
        return self.backend.sqlite_store()

    # -- memories: the memory service's operations (services/memory.py) -------------------

    remember = Delegate("memory", MemoryService.remember)
    remember_many = Delegate("memory", MemoryService.remember_many)
    prepare_memories = Delegate("memory", MemoryService.prepare_memories)
    prepare_memory = Delegate("memory", MemoryService.prepare_memory)
    write_prepared = Delegate("memory", MemoryService.write_prepared)
    apply_graph = Delegate("memory", MemoryService.apply_graph)
    get = Delegate("memory", MemoryService.get)
    list = Delegate("memory", MemoryService.list)
    history = Delegate("memory", MemoryService.history)
    modify = Delegate("memory", MemoryService.modify)
    forget = Delegate("memory", MemoryService.forget)
    recover = Delegate("memory", MemoryService.recover)
    feedback = Delegate("memory", MemoryService.feedback)

    def flush_accesses(self) -> int:
        """Write the accesses recorded so far now (tests, benchmarks, before a report)."""
        return self.memory.accesses.flush()  # the recorder recall and reads share

    def token_authority_store(self) -> CoreStore:
        """Where API tokens and their signing key live (daemon/security.py)."""
        return self.backend.core

    def release_worker_leases(self) -> int:
        """At shutdown, after the workers stopped: hand the jobs this process still leases
        back to pending with their attempt (a job interrupted by a shutdown did not fail)."""
        return self.backend.release_leases(self.operations.ops, stamp(self.clock))

    def checkpoint(self) -> None:
        """At shutdown: fold the SQLite WAL back into the database file."""
        self.backend.checkpoint()

    def close(self) -> None:
        wired = vars(self).get("_wired", False)  # a lazy app may never have wired the rest
        if wired:
            self.projection.close()  # its threads write to the store: they stop before it closes
        self.memory.accesses.close()  # the accesses still buffered, written before closing
        if self.vectors is not None:
            self.vectors.close()  # the vector graph saved, when it changed
        if wired and self.recaller.query_embeddings is not None:
            self.recaller.query_embeddings.close()
        if self._worker_embedder is not self.embedder:  # the model's child processes
            getattr(self._worker_embedder, "close", lambda: None)()
        self.backend.close()

    def __enter__(self) -> SignetApp:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def recall(
        self, query: RecallQuery, *, actor: Actor | None = None, route: str = "recall",
        scope: MemoryScope | None = None,
    ) -> RecallResponse:
        """`actor` and `route` only label the recall QA ledger row (when that is enabled).
        `scope`: a scoped caller recalls only inside its agent and project."""
        if scope is not None:
            query = replace(query, filters=scoped_filters(query.filters, scope))
        if query.filters.community is not None:
            query = replace(query, filters=self.memory.community_resolved(query.filters))
        if query.touch and self.config.pipeline.mutations_frozen:
            query = replace(query, touch=False)
        started = time.perf_counter()
        response = self.recaller.recall(query)
        self.ledger.record(query, response, actor or Actor(), route, started, scope)
        return response

    search_ledger = Delegate("ledger", SearchLedger.page)

    # -- sessions and lineage (signet/sessions/service.py), each taking a caller's scope ------

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

    def workers(self) -> builtins.list[Worker]:
        """The background workers over this app's store and providers (built once)."""
        from signet.services.providers import worker_embedder
        from signet.worker_list import Parts, build_workers

        if self._workers is None:
            self._worker_embedder = worker_embedder(self.config, self.embedder)
            self._workers = build_workers(Parts(
                self.config, self.backend.core, self.backend.pipeline(), self.graph.store,
                self.recaller, self.memory, self.sessions, self.connectors, self.embedder,
                self.llm, self.operations, self._worker_embedder,
            ))
        return self._workers

    def run_pipeline_until_idle(
        self, max_rounds: int = 100_000, *, only: Sequence[str] | None = None
    ) -> int:
        """Run the workers (all, or those named in `only`) until none has work; return the
        ticks that did work."""
        from signet.workers.loop import WorkerLoop

        chosen = [w for w in self.workers() if only is None or w.name in only]
        return WorkerLoop(chosen, clock=self.clock).run_until_idle(max_rounds)

    run_retention = Delegate("operations", maintenance.run_retention)
    review_queue = Delegate("reviews", ReviewQueue.items)
    resolve_review = Delegate("reviews", ReviewQueue.resolve)
    jobs = Delegate("job_queue", JobQueue.list)
    job = Delegate("job_queue", JobQueue.get)
    job_depths = Delegate("job_queue", JobQueue.depths)
    requeue_dead_jobs = Delegate("job_queue", JobQueue.requeue_dead)

    # -- batch operations, repair and diagnostics (signet/batch.py, signet/maintenance.py) ----

    def forget_batch(
        self, *, filters: MemoryFilters = MemoryFilters(), scope: MemoryScope | None = None,
        **request: Any,
    ) -> dict[str, Any]:
        """Preview, then execute with the preview's confirm token; see `batch.forget_batch`.
        A scoped caller matches and forgets only inside its scope."""
        return batch.forget_batch(
            self.memory, self.batch_key, filters=scoped_filters(filters, scope), scope=scope,
            **request,
        )

    modify_batch = Delegate("memory", batch.modify_batch)
    pipeline_status = Delegate("operations", maintenance.pipeline_queue)
    release_stale_leases = Delegate("operations", maintenance.release_stale_leases)
    fts_check = Delegate("operations", maintenance.fts_check)
    fts_rebuild = Delegate("operations", maintenance.fts_rebuild)
    re_embed = Delegate("operations", maintenance.re_embed)
    embeddings_status = Delegate("operations", maintenance.embeddings_status)
    embeddings_health = Delegate("operations", maintenance.embeddings_health)

    secret_store = Delegate("config", SecretStore.of)
    run_maintenance = Delegate("operations", maintenance.run_maintenance)
    maintenance_report = Delegate("operations", maintenance.maintenance_report)
    reconcile_skills = Delegate("memory", skills.reconcile)
    list_skills = Delegate("memory", skills.list_skills)
    show_skill = Delegate("memory", skills.show)
    install_skill = Delegate("memory", skills.install)
    remove_skill = Delegate("memory", skills.remove)

    effective_config = Delegate("config", effective_config)
    identity_file = Delegate("config", read_identity)
    write_identity_file = Delegate("config", write_identity)

    def status(self) -> dict[str, Any]:
        return maintenance.app_status(
            self.operations, self.recaller.guard, self.backend.name, self.backend.database()
        )
