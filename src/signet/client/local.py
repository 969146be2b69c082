"""The in-process mode: the same operations as `signet.Client`, on the store opened here.

For when no daemon runs (the CLI falls back to it; `signet mcp` without a daemon keeps one
app for its lifetime): each method answers with the JSON the daemon would send
(`Memory.to_dict()`, `RecallResponse.to_dict()`, ...), so a caller prints and reads one shape
whichever side answered. The app opens with the configured embedder only for the operations
that write or search vectors (remember, recall except keyword mode, a content change) and for
status; get, list, history, forget and recover open it without one, so they never touch the
model. SQLite's WAL mode lets this run next to other readers.
"""

from __future__ import annotations

import dataclasses
from types import TracebackType
from typing import TYPE_CHECKING, Any

from signet.config import Config
from signet.errors import NotFound
from signet.types import Actor, MemoryFilters, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

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
    """
    if not cfg.db_path.is_file():
        raise NotFound(
            f"no Signet workspace at {cfg.workspace} (no database at {cfg.db_path}): run "
            "`signet init` to create it, or choose another with --workspace or SIGNET_WORKSPACE",
            code="workspace_missing",
        )




class LocalClient:
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

    def status(self) -> JSON:
        # The configured embedder is needed to report it and audit its vectors; constructing
        # one loads no model (the local one loads on its first embed). The daemon adds its own
        # section; in-process there is none, and saying so keeps the keys the same for scripts.
        return {**self._existing(embedder=True).status(), "daemon": None}

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None

    def __enter__(self) -> LocalClient:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

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

        self._app = SignetApp.open(
            without_workers(self._cfg), embedder="config" if embedder else None
        )
        self._with_embedder = embedder
        return self._app


def _filters(values: JSON) -> MemoryFilters:
    fields = dict(values)
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    return MemoryFilters(**fields)
