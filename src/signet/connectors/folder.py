"""The folder connector: a folder of notes kept in sync as documents, incrementally. `cursor_json`
keeps each file's mtime, size and document id; a sync registers new and changed files through the
document service and deletes its own documents of files that are gone. A connector from a bundle
arrives disabled and a link out of the folder is skipped, so neither makes the daemon read a path
someone else chose. Syncs run on demand and every `documents.connector_sync_interval_ms`.
"""

from __future__ import annotations

import builtins
import logging
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from signet.clock import stamp
from signet.documents.extract import EXTENSIONS
from signet.documents.service import DocumentService, is_folder, local_path
from signet.errors import Conflict, Forbidden, Frozen, InvalidInput, NotFound, SignetError
from signet.paths import leads_out
from signet.store.documents import Connector
from signet.types import Actor, MemoryScope
from signet.workers.scheduled import RunInterval

log = logging.getLogger(__name__)

PROVIDER = "folder"


@dataclass
class SyncReport:
    connector_id: str
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: int = 0  # mtime and size unchanged: not even read
    removed: int = 0
    errors: list[str] = field(default_factory=list)
    links_skipped: list[str] = field(default_factory=list)  # links leading out of the folder

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def note_files(folder: Path, links_out: list[str] | None = None) -> list[Path]:
    """Supported files under `folder`, sorted; hidden folders and files skipped, and so are
    symlinks leading out of the folder, to a file or a folder, supported or not (their
    relative paths appended to `links_out`; a folder link is never walked)."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_symlink() and leads_out(path, folder):
            if links_out is not None:
                links_out.append(rel.as_posix())
            continue
        if path.suffix.lower() not in EXTENSIONS:
            continue
        if path.is_file():
            found.append(path)
    return found


def enabled(connector: Connector) -> bool:
    """Whether the connector may sync (one imported from a bundle arrives disabled)."""
    return connector.config.get("enabled", True) is not False


class FolderConnectors:
    """The folder connectors of every slice, over the documents' store on either backend.

    A folder is on one machine: only a daemon on the host that added it (`config.host`) syncs it,
    others answer a Conflict naming the host, so no daemon on a shared database reads another
    machine's path or forgets files it cannot see. Concurrent syncs on one host register each file
    once (a per-source lock on PostgreSQL, the one writer on SQLite); the last cursor written wins.
    """

    def __init__(self, documents: DocumentService, host: str | None = None) -> None:
        """`host`: this machine's name (default: socket.gethostname())."""
        self.documents = documents
        self.docs = documents.docs
        self.host = host or socket.gethostname()

    def add(
        self, path: Any, *, name: str | None = None, project: str | None = None,
        actor: Actor = Actor(), scope: MemoryScope | None = None,
    ) -> dict[str, Any]:
        if scope is not None and (scope.agent_id or scope.project):
            raise Forbidden("a scoped token may not connect a local folder")
        self._check_mutable()
        folder = local_path(path)
        if not is_folder(folder):  # a well-formed path that names no folder: not found
            raise NotFound(f"no such folder: {folder}")
        connector_id = self.docs.add_connector(
            provider=PROVIDER, display_name=name or folder.name,
            config={"path": str(folder), "host": self.host},
            agent_id=actor.agent_id, project=project, now=stamp(self.documents.clock),
        )
        return self.get(connector_id)

    def get(self, connector_id: str, scope: MemoryScope | None = None) -> dict[str, Any]:
        found = self.docs.get_connector(connector_id, scope)
        if found is None:
            raise NotFound(f"connector {connector_id} not found")
        return self._health(found)

    def list(self, scope: MemoryScope | None = None) -> list[dict[str, Any]]:
        return [self._health(c) for c in self.docs.list_connectors(scope)]

    def _health(self, connector: Connector) -> dict[str, Any]:
        return {**connector.to_dict(), "enabled": enabled(connector),
                "documents": self.docs.document_counts(connector.id)}

    def sync_all(self) -> builtins.list[SyncReport]:
        return [self.sync(c.id) for c in self.docs.list_connectors()
                if self.is_local(c) and enabled(c)]

    def enable(self, connector_id: str, scope: MemoryScope | None = None) -> dict[str, Any]:
        """Enable a connector (one imported from a bundle arrives disabled) on this host, once
        its folder is there; the caller must be allowed to have the daemon read it (admin)."""
        if scope is not None and (scope.agent_id or scope.project):
            raise Forbidden("a scoped token may not enable a local folder")
        connector = self.docs.get_connector(connector_id, scope)
        if connector is None:
            raise NotFound(f"connector {connector_id} not found")
        self._check_mutable()
        folder = local_path(connector.config.get("path"))
        if not is_folder(folder):
            raise NotFound(f"no such folder: {folder}")
        config = {**connector.config, "path": str(folder), "host": self.host, "enabled": True}
        self.docs.set_connector_config(connector_id, config, stamp(self.documents.clock))
        return self.get(connector_id)

    def is_local(self, connector: Connector) -> bool:
        """Whether the connector's folder is on this machine (one added before hosts were
        recorded counts as local)."""
        return connector.config.get("host", self.host) == self.host

    def sync(self, connector_id: str, scope: MemoryScope | None = None) -> SyncReport:
        connector = self.docs.get_connector(connector_id, scope)
        if connector is None:
            raise NotFound(f"connector {connector_id} not found")
        if not enabled(connector):
            raise Conflict(
                f"connector {connector_id} is disabled (it came from an imported bundle): check"
                f" its folder {connector.config.get('path')!r} and enable it with `signet"
                f" connector enable {connector_id}` (admin)", code="connector_disabled",
            )
        if not self.is_local(connector):
            raise Conflict(
                f"connector {connector_id} watches a folder on host {connector.config['host']!r};"
                f" this daemon runs on {self.host!r}: sync it through a daemon on that host",
                code="connector_elsewhere",
            )
        self._check_mutable()
        self._state(connector_id, "syncing")
        try:
            report, cursor = self._walk(connector)
        except (OSError, SignetError) as exc:
            self._state(connector_id, "error", error=f"{type(exc).__name__}: {exc}")
            raise
        problems = [*report.errors,
                    *(f"{rel}: a link out of the folder, skipped" for rel in report.links_skipped)]
        self._state(connector_id, "idle", cursor=cursor, synced=True,
                    error="; ".join(problems)[:2000] or None)
        return report

    def _walk(self, connector: Connector) -> tuple[SyncReport, dict[str, Any]]:
        folder = Path(connector.config["path"])
        if not folder.is_dir():
            raise InvalidInput(f"the folder is gone: {folder}")
        report = SyncReport(connector.id)
        known: dict[str, dict[str, Any]] = dict(connector.cursor.get("files", {}))
        seen: dict[str, dict[str, Any]] = {}
        actor = Actor(name=f"connector:{connector.id}", type="daemon", agent_id=connector.agent_id)
        for path in note_files(folder, report.links_skipped):
            rel = path.relative_to(folder).as_posix()
            stat = path.stat()
            entry = known.get(rel)
            if entry and entry["mtime_ns"] == stat.st_mtime_ns and entry["size"] == stat.st_size:
                report.skipped += 1
                seen[rel] = entry
                continue
            try:
                registered = self.documents.ingest_file(
                    path, actor=actor, project=connector.project, connector_id=connector.id,
                    source_key=f"connector:{connector.id}:{rel}",
                )
            except SignetError as exc:
                report.errors.append(f"{rel}: {exc}")
                if entry:  # the file is still there: its indexed version stays, not "deleted"
                    seen[rel] = entry
                continue
            outcome = registered.outcome
            if entry and entry["document_id"] != registered.document.id:
                # The file's one document is another (an older one, made by `signet ingest`,
                # adopted now): the connector's own copy of it is a duplicate.
                self._forget_file(connector.id, entry, actor)
            report.added += outcome == "queued"
            report.changed += outcome == "requeued"
            report.unchanged += outcome == "unchanged"
            seen[rel] = {"mtime_ns": stat.st_mtime_ns, "size": stat.st_size,
                         "document_id": registered.document.id}
        for rel, entry in known.items():
            if rel not in seen:
                self._forget_file(connector.id, entry, actor)
                report.removed += 1
        return report, {"files": seen}

    def _forget_file(self, connector_id: str, entry: Any, actor: Actor) -> None:
        doc_id = entry.get("document_id") if isinstance(entry, dict) else None
        if not isinstance(doc_id, str):
            return
        document = self.docs.get(doc_id)
        if document is None or document.connector_id != connector_id:
            return  # deleted by hand already, or a cursor naming another's document
        try:
            self.documents.delete(doc_id, actor=actor)
        except NotFound:
            pass  # deleted meanwhile

    def remove(self, connector_id: str, scope: MemoryScope | None = None,
               actor: Actor = Actor()) -> dict[str, Any]:
        """Remove the connector and its documents (their chunks forgotten)."""
        if self.docs.get_connector(connector_id, scope) is None:
            raise NotFound(f"connector {connector_id} not found")
        self._check_mutable()
        forgotten = 0
        for doc_id in self.docs.connector_documents(connector_id):
            try:
                forgotten += self.documents.delete(doc_id, actor=actor)["forgotten"]
            except NotFound:
                pass  # deleted meanwhile (by hand, or another daemon's sync)
        self.docs.delete_connector(connector_id)
        return {"id": connector_id, "removed": True, "forgotten": forgotten}

    def _check_mutable(self) -> None:
        # Under mutationsFrozen the documents refuse every write; a connector must not write
        # its own rows (or a sync's status) either, nor half-remove its documents.
        if self.documents.frozen:
            raise Frozen()

    def _state(self, connector_id: str, status: str, *, error: str | None = None,
               cursor: dict[str, Any] | None = None, synced: bool = False) -> None:
        self.docs.set_connector_state(connector_id, status=status,
                                      now=stamp(self.documents.clock), last_error=error,
                                      cursor=cursor, synced=synced)


class ConnectorWorker(RunInterval):
    """Syncs every connector at most once per `interval` of the `now` it is given."""

    name = "connectors"

    def __init__(self, connectors: FolderConnectors, interval_ms: int, *, frozen: bool = False) -> None:
        super().__init__(timedelta(milliseconds=interval_ms))
        self.connectors = connectors
        self.frozen = frozen

    def tick(self, now: datetime) -> bool:
        if self.frozen or not self.due(now):
            return False
        did = False
        for connector in self.connectors.docs.list_connectors():
            if not self.connectors.is_local(connector) or not enabled(connector):
                continue  # another machine's folder (a daemon there syncs it), or disabled
            try:
                report = self.connectors.sync(connector.id)
            except (OSError, SignetError) as exc:
                log.warning("connector %s sync failed: %s", connector.id, exc)
                continue
            did = did or bool(report.added or report.changed or report.removed)
        return did
