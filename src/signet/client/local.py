"""The in-process mode: `signet.Client`'s operations on the store opened here, for when no daemon
runs. Each method answers with the JSON the daemon would send, so callers read one shape. The
configured embedder is opened only for operations that need vectors (remember, non-keyword
recall, a content change) and status, so reads never touch the model; WAL lets this run beside
other readers.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signet.client.closing import Closing
from signet.config import Config
from signet.errors import NotFound
from signet.types import Actor, MemoryFilters, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp
    from signet.graph.service import KnowledgeGraph

__all__ = ["ACTOR_NAME", "LocalClient", "require_workspace", "without_workers"]

ACTOR_NAME = "cli"

JSON = dict[str, Any]


def without_workers(cfg: Config) -> Config:
    """`cfg` for an app opened in a process that runs no workers (the CLI, `signet mcp` with no
    daemon): its writes embed on the write path (`embedding.write_path: inline`; a local
    embedder only), since no embed worker runs here to add a deferred vector, and the memory
    would not be found by meaning until a daemon next started."""
    return cfg.replace(embedding=dataclasses.replace(cfg.embedding, write_path="inline"))


def require_workspace(cfg: Config) -> None:
    """Refuse, pointing at `signet init`, when the workspace has no database.

    Opening the store creates it, so a read-only command run against a typo'd `--workspace`
    would otherwise leave a fresh empty workspace behind and report it as if it were real.
    A shared store (`store.backend: postgres`) is no file of the workspace's: nothing to check.
    """
    if cfg.store.backend == "sqlite" and not cfg.db_path.is_file():
        raise NotFound(
            f"no Signet workspace at {cfg.workspace} (no database at {cfg.db_path}): run "
            "`signet init` to create it, or choose another with --workspace or SIGNET_WORKSPACE",
            code="workspace_missing",
        )




class LocalClient(Closing):
    """Opens the workspace's store in this process; the embedder only when an operation needs it."""

    actor = Actor(name=ACTOR_NAME, type="operator")

    def __init__(self, cfg: Config) -> None:
        self._cfg = cfg
        self._app: SignetApp | None = None
        self._with_embedder = False

    def remember(self, content: str, fields: JSON) -> JSON:
        result = self._open(embedder=True).remember(content, actor=self.actor, **fields)
        return {
            "id": result.id,
            "deduped": result.deduped,
            "embedded": result.embedded,
            "memory": result.memory.to_dict(),
        }

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> JSON:
        chosen = mode or self._cfg.search.default_mode
        request = RecallQuery(
            query, limit=limit, mode=chosen, filters=_filters(filters), expand=expand,  # type: ignore[arg-type]
            min_confidence=min_confidence,
        )
        return self._existing(embedder=chosen != "keyword").recall(request).to_dict()

    def import_transcript(self, session_id: str, body: JSON) -> JSON:
        app = self._open(embedder=False)
        return app.import_transcript(actor=self.actor, session_id=session_id, **body)

    def sessions(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        return self._existing(embedder=False).session_list(limit=limit, offset=offset, **filters)

    def session(self, session_id: str, *, project: str | None) -> JSON:
        return self._existing(embedder=False).session_show(session_id, project=project)

    def session_search(self, query: str, *, limit: int, project: str | None) -> JSON:
        return self._existing(embedder=False).session_search(query, limit=limit, project=project)

    def get(self, memory_id: str) -> JSON:
        return self._existing(embedder=False).get(memory_id, access=True).to_dict()

    def list(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        app = self._existing(embedder=False)
        page = app.list(_filters(filters), limit=limit, offset=offset)
        return {
            "items": [memory.to_dict() for memory in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
        }

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> JSON:
        # New content gets a new vector, written with the configured model.
        app = self._existing(embedder="content" in changes)
        memory = app.modify(
            memory_id, changes, actor=self.actor, expected_version=version, reason=reason
        )
        return memory.to_dict()

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> JSON:
        app = self._existing(embedder=False)
        return app.forget(memory_id, actor=self.actor, force=force, reason=reason).to_dict()

    def recover(self, memory_id: str, *, reason: str | None) -> JSON:
        app = self._existing(embedder=False)
        return app.recover(memory_id, actor=self.actor, reason=reason).to_dict()

    def history(self, memory_id: str) -> JSON:
        events = self._existing(embedder=False).history(memory_id)
        return {"history": [event.to_dict() for event in events]}

    def forget_session(
        self, session_id: str, *, project: str | None = None, reason: str | None = None
    ) -> JSON:
        app = self._existing(embedder=False)
        return app.session_forget(session_id, project=project, reason=reason)

    # -- lineage, graph, documents, jobs, retention, maintenance: the daemon's routes' calls --

    def threads(self) -> JSON:
        return self._existing(embedder=False).threads()

    def thread(self, thread: str) -> JSON:
        return self._existing(embedder=False).thread(thread, actor=self.actor)

    def lineage(self, ref: str) -> JSON:
        return self._existing(embedder=False).lineage(ref)

    def reindex_artifacts(self) -> JSON:
        return self._existing(embedder=False).reindex_artifacts()

    def synthesize_memory_md(self) -> JSON:
        return self._existing(embedder=False).synthesize_memory_md()

    def entities(self, *, search: str | None = None, limit: int = 50, offset: int = 0) -> JSON:
        return self._graph().entities(search=search, limit=limit, offset=offset)

    def entity(self, ref: str) -> JSON:
        graph = self._graph()
        return graph.entity(graph.find(ref))

    def pin_entity(
        self, ref: str, *, suppress: bool = False, weight: float | None = None,
        reason: str | None = None,
    ) -> JSON:
        graph = self._graph()
        return graph.pin(graph.find(ref), suppress=suppress, weight=weight, reason=reason,
                         actor=self.actor)

    def unpin_entity(self, ref: str) -> JSON:
        graph = self._graph()
        return graph.unpin(graph.find(ref))

    def communities(self) -> JSON:
        return {"communities": self._graph().communities()}

    def detect_communities(self) -> JSON:
        return {"communities": self._graph().detect_communities()}

    def graph_stats(self) -> JSON:
        return self._graph().stats()

    def ingest_document(
        self, *, content: str | None = None, url: str | None = None, path: str | None = None,
        title: str | None = None, project: str | None = None,
    ) -> JSON:
        docs = self._open(embedder=True).documents
        if content is not None:
            registered = docs.ingest_text(content, title=title, actor=self.actor, project=project)
        elif url is not None:
            registered = docs.ingest_url(url, title=title, actor=self.actor, project=project)
        else:
            registered = docs.ingest_file(path, title=title, actor=self.actor, project=project)
        return registered.to_dict()

    def work(self, worker_name: str) -> bool:
        """One tick of a worker here (no daemon runs one): whether it found work. The
        in-process counterpart of waiting for the daemon's workers."""
        app = self._open(embedder=True)
        worker = next(w for w in app.workers() if w.name == worker_name)
        return worker.tick(app.clock.now())

    def documents(self, *, status: str | None = None, limit: int = 50, offset: int = 0) -> JSON:
        return self._existing(embedder=False).documents.list(
            status=status, limit=limit, offset=offset
        )

    def document(self, document_id: str) -> JSON:
        return self._existing(embedder=False).documents.get(document_id)

    def delete_document(self, document_id: str) -> JSON:
        return self._existing(embedder=False).documents.delete(document_id, actor=self.actor)

    def connectors(self) -> JSON:
        return {"connectors": self._existing(embedder=False).connectors.list()}

    def connector(self, connector_id: str) -> JSON:
        return self._existing(embedder=False).connectors.get(connector_id)

    def add_connector(
        self, path: str, *, name: str | None = None, project: str | None = None
    ) -> JSON:
        app = self._open(embedder=True)
        return app.connectors.add(path, name=name, project=project, actor=self.actor)

    def sync_connector(self, connector_id: str) -> JSON:
        return self._existing(embedder=True).connectors.sync(connector_id).to_dict()

    def enable_connector(self, connector_id: str) -> JSON:
        return self._existing(embedder=False).connectors.enable(connector_id)

    def remove_connector(self, connector_id: str) -> JSON:
        app = self._existing(embedder=False)
        return app.connectors.remove(connector_id, actor=self.actor)

    def import_from(
        self, path: str, *, source: str = "signet", project: str | None = None,
        progress: Callable[[str, int], None] | None = None,
    ) -> JSON:
        from signet.portable.imports import import_from

        # A bundle restores rows as they were; mem0 and markdown go through the write path,
        # which embeds with the configured model.
        app = self._open(embedder=source != "signet")
        return import_from(app, Path(path), source, project=project, progress=progress)

    def skills(self) -> JSON:
        # The configured embedder indexes a skill's memory; the LLM is never asked.
        app = self._existing(embedder=True)
        report = app.reconcile_skills()
        return {"skills": app.list_skills(), "errors": report["errors"]}

    def skill(self, name: str) -> JSON:
        app = self._existing(embedder=True)
        app.reconcile_skills()
        return app.show_skill(name)

    def install_skill(self, path: str, *, force: bool = False) -> JSON:
        return self._open(embedder=True).install_skill(path, force=force)

    def remove_skill(self, name: str) -> JSON:
        return self._existing(embedder=True).remove_skill(name)

    def embeddings_status(self) -> JSON:
        return self._existing(embedder=True).embeddings_status()

    def re_embed(self) -> JSON:
        return self._existing(embedder=True).re_embed()

    def jobs(
        self, *, status: str | None = None, job_type: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> JSON:
        app = self._existing(embedder=False)
        found = app.jobs(status=status, job_type=job_type, limit=limit, offset=offset)
        return {"items": [job.to_dict() for job in found], "limit": limit, "offset": offset,
                "depths": app.job_depths()}

    def job(self, job_id: str) -> JSON:
        return self._existing(embedder=False).job(job_id).to_dict()

    def requeue_dead(self, job_ids: builtins.list[str] | None = None) -> JSON:
        return {"requeued": self._existing(embedder=False).requeue_dead_jobs(job_ids)}

    def run_retention(self, *, dry_run: bool = False) -> JSON:
        return self._existing(embedder=False).run_retention(dry_run=dry_run).to_dict()

    def run_maintenance(self, *, execute: bool = False) -> JSON:
        # The configured embedder audits the stored vectors; the LLM is never asked.
        return self._existing(embedder=True).run_maintenance(execute=execute)

    def maintenance_report(self) -> JSON:
        return self._existing(embedder=True).maintenance_report()

    def status(self) -> JSON:
        # The configured embedder is needed to report it and audit its vectors; constructing
        # one loads no model (the local one loads on its first embed). The daemon adds its own
        # section; in-process there is none, and saying so keeps the keys the same for scripts.
        return {**self._existing(embedder=True).status(), "daemon": None}

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None

    def _graph(self) -> KnowledgeGraph:
        return self._existing(embedder=False).graph

    def _existing(self, *, embedder: bool) -> SignetApp:
        """The app of a workspace that exists: operations on existing memories must not leave
        a new workspace behind (only remember creates one)."""
        require_workspace(self._cfg)
        return self._open(embedder=embedder)

    def _open(self, *, embedder: bool) -> SignetApp:
        if self._app is not None and (self._with_embedder or not embedder):
            return self._app
        self.close()
        # Imported here: the daemon path of the CLI never needs the store, numpy or recall.
        from signet.app import SignetApp

        # lazy: one call in this process builds only the services it uses (a `list` imports
        # neither recall nor the workers); the CLI makes its calls from one thread.
        self._app = SignetApp.open(
            without_workers(self._cfg), embedder="config" if embedder else None, lazy=True
        )
        self._with_embedder = embedder
        return self._app


def _filters(values: JSON) -> MemoryFilters:
    fields = dict(values)
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    return MemoryFilters(**fields)
