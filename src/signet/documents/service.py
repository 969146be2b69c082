"""Registering, reading, listing and deleting documents within a caller's scope.

Registration is cheap and synchronous: "unchanged", requeued or inserted with its `document_ingest`
job in one transaction; the rest is the worker's. A scoped caller may not name a local file, which
the daemon would read with the operator's rights.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet.clock import Clock, SystemClock, stamp
from signet.config import DocumentsConfig
from signet.documents.fetch import parse_url
from signet.errors import Forbidden, Frozen, InvalidInput, NotFound
from signet.services.memory_input import check_text
from signet.store import documents as doc_sql
from signet.store.document_store import DocumentStore
from signet.store.documents import NewDocument
from signet.types import MAX_OFFSET, Actor, MemoryScope

MAX_TITLE = 500
STATUSES = doc_sql.STATUSES  # the walk of a document, for the adapters' schemas


@dataclass(frozen=True, slots=True)
class Registered:
    document: doc_sql.Document
    outcome: str  # "queued" (new), "requeued" (changed) or "unchanged"

    def to_dict(self) -> dict[str, Any]:
        return {**self.document.to_dict(), "outcome": self.outcome}


class DocumentService:
    """The documents of every slice, over a DocumentStore (store/document_store.py): the same
    service on SQLite and PostgreSQL."""

    def __init__(
        self, docs: DocumentStore, cfg: DocumentsConfig, *, max_attempts: int = 3,
        frozen: bool = False, clock: Clock | None = None,
    ) -> None:
        self.docs = docs
        self.clock = clock or SystemClock()
        self.cfg = cfg
        self.max_attempts = max_attempts
        self.frozen = frozen

    # -- registration ---------------------------------------------------------------------------

    def ingest_text(
        self, text: Any, *, title: str | None = None, actor: Actor = Actor(),
        project: str | None = None, scope: MemoryScope | None = None,
        source_key: str | None = None, connector_id: str | None = None,
    ) -> Registered:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("content must be a non-empty string")
        check_text(text, "content")  # no NUL, no lone surrogate: the same on both backends
        self._check_size(len(text.encode("utf-8")), "content")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self._register(
            "text", source_key or f"text:{digest}", None, digest, title, text, actor, project,
            scope, connector_id,
        )

    def ingest_file(
        self, path: Any, *, title: str | None = None, actor: Actor = Actor(),
        project: str | None = None, scope: MemoryScope | None = None,
        connector_id: str | None = None, source_key: str | None = None,
    ) -> Registered:
        if scope is not None and (scope.agent_id or scope.project):
            raise Forbidden("a scoped token may not ingest local files; send the content instead")
        file = local_path(path)
        if not _is_file(file):
            if _exists(file):  # a device, a FIFO, a folder: nothing to read as one document
                raise InvalidInput(f"{file} is not a regular file")
            # A well-formed path that names nothing: not found, not bad input.
            raise NotFound(f"no such file: {file}")
        self._check_size(file.stat().st_size, f"file {file}")
        try:
            digest = hashlib.sha256(file.read_bytes()).hexdigest()
        except OSError as exc:
            raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}") from exc
        return self._register(
            "file", source_key or f"file:{file}", str(file), digest, title, None, actor,
            project, scope, connector_id,
        )

    def ingest_url(
        self, url: Any, *, title: str | None = None, actor: Actor = Actor(),
        project: str | None = None, scope: MemoryScope | None = None,
    ) -> Registered:
        if not isinstance(url, str) or not url.strip():
            raise InvalidInput("url must be a non-empty string")
        if not self.cfg.url_fetch_enabled:
            raise Forbidden(
                "fetching URLs is off; set documents.url_fetch_enabled: true in agent.yaml",
                code="url_fetch_disabled",
            )
        parse_url(url)  # a URL that cannot be fetched is refused now, not by the worker
        # The content is unknown until fetched: the worker decides "unchanged" for URLs.
        return self._register("url", f"url:{url}", url, None, title, None, actor, project,
                              scope, None)

    def _register(
        self, source_type: str, source_key: str, source_url: str | None, digest: str | None,
        title: str | None, raw: str | None, actor: Actor, project: str | None,
        scope: MemoryScope | None, connector_id: str | None,
    ) -> Registered:
        if self.frozen:
            raise Frozen()
        agent_id, project = _placed(actor, project, scope)
        new = NewDocument(
            source_type=source_type, source_key=source_key, source_url=source_url, digest=digest,
            title=_title(title), raw_content=raw, agent_id=agent_id, project=project,
            connector_id=connector_id,
        )
        document, outcome = self.docs.register(new, now=stamp(self.clock),
                                               max_attempts=self.max_attempts)
        return Registered(document, outcome)

    def _check_size(self, size: int, what: str) -> None:
        if size > self.cfg.max_file_bytes:
            raise InvalidInput(f"{what} is {size} bytes; the limit is {self.cfg.max_file_bytes}"
                               " (documents.max_file_bytes)")

    # -- reads and delete -----------------------------------------------------------------------

    def get(self, doc_id: str, scope: MemoryScope | None = None) -> dict[str, Any]:
        document = self.docs.get(doc_id, scope)
        if document is None:
            raise NotFound(f"document {doc_id} not found")
        chunks = [{"memory_id": m, "chunk_index": i} for m, i, _h in self.docs.chunk_links(doc_id)]
        return {**document.to_dict(), "chunks": chunks}

    def list(
        self, scope: MemoryScope | None = None, *, status: str | None = None,
        connector_id: str | None = None, limit: int = 50, offset: int = 0,
    ) -> dict[str, Any]:
        if status is not None and status not in doc_sql.STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(doc_sql.STATUSES)}")
        if not 1 <= limit <= 1000 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"limit must be between 1 and 1000 and offset between 0 and {MAX_OFFSET}")
        items, total = self.docs.list_page(scope, status=status, connector_id=connector_id,
                                           limit=limit, offset=offset)
        return {"items": [d.to_dict() for d in items], "total": total, "limit": limit,
                "offset": offset}

    def delete(
        self, doc_id: str, *, actor: Actor = Actor(), scope: MemoryScope | None = None
    ) -> dict[str, Any]:
        """Forget the chunks the document wrote (soft delete: history kept, recoverable within
        the tombstone window) and remove the document."""
        if self.frozen:
            raise Frozen()
        forgotten = self.docs.delete(doc_id, actor=actor, now=stamp(self.clock), scope=scope)
        if forgotten is None:
            raise NotFound(f"document {doc_id} not found")
        return {"id": doc_id, "deleted": True, "forgotten": forgotten}


def local_path(path: Any) -> Path:
    """A file or folder named by a caller, absolute; a name no file system could hold (empty,
    a NUL byte, a loop of links) is bad input, not a crash."""
    if not isinstance(path, str | Path) or not str(path).strip():
        raise InvalidInput("path must be a non-empty string")
    try:
        return Path(path).expanduser().resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise InvalidInput(f"not a usable path: {str(path)[:200]!r} ({exc})") from exc


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system names no file
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name too long for the file system names nothing
        return False


def is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long for the file system names no folder
        return False


def _placed(actor: Actor, project: str | None, scope: MemoryScope | None) -> tuple[str, str | None]:
    """The agent and project a new document lands in: a scoped caller's own."""
    if project is not None and not isinstance(project, str):
        raise InvalidInput("project must be a string")
    agent_id = actor.agent_id
    if scope is not None:
        if scope.project is not None:
            if project not in (None, scope.project):
                raise Forbidden(f"this token may write only to project {scope.project!r}")
            project = scope.project
        agent_id = scope.agent_id or agent_id
    return agent_id, project


def _title(title: Any) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str):
        raise InvalidInput("title must be a string")
    check_text(title, "title")
    return title.strip()[:MAX_TITLE] or None
