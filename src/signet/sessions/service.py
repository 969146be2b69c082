"""The sessions service: what adapters ask of the lineage, each call checked against the caller's
scope, the writes refused while mutations are frozen. A scoped caller sees only its slice's
sessions and imports only into it. A file named by `path` is read with the daemon's rights, so
only an admin may name any, and another token's hook only its harness's transcript folders.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from signet.clock import Clock, SystemClock
from signet.config import Config
from signet.errors import Forbidden, Frozen, InvalidInput, NotFound
from signet.lineage.excerpt import excerpt
from signet.lineage.files import TRANSCRIPTS, read_messages, workspace_file
from signet.lineage.formats import HARNESSES, Message, parse
from signet.sessions.importer import Importer, ImportResult
from signet.sessions.lineage import Lineage
from signet.sessions.synthesis import HeadSynthesis
from signet.sessions.transcript_folders import transcript_file
from signet.store.session_store import SessionStore
from signet.store.sessions import SessionRow
from signet.types import MAX_OFFSET, Actor, Memory, MemoryScope, format_ts

__all__ = ["Sessions"]


@dataclass
class Sessions:
    config: Config
    store: SessionStore
    clock: Clock = field(default_factory=SystemClock)
    head: HeadSynthesis = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.head = HeadSynthesis(self.config, self.store)

    @property
    def workspace(self) -> Path:
        return self.config.workspace

    # -- import -----------------------------------------------------------------------------

    def import_transcript(
        self, *, harness: Any, session_id: str | None = None, path: Any = None,
        content: Any = None, project: Any = None, ended: bool = True, agent_id: str = "default",
        scope: MemoryScope | None = None, confined: bool = False,
    ) -> ImportResult:
        """Import a transcript given as `content` or as a file `path` (exactly one); `confined`
        reads a path only inside the harness's transcript folders."""
        if not isinstance(harness, str) or harness not in HARNESSES:
            raise InvalidInput(f"unknown harness {harness!r} (one of {', '.join(HARNESSES)})")
        if (path is None) == (content is None):
            raise InvalidInput("give exactly one of path or content")
        if project is not None and (not isinstance(project, str) or not project.strip()):
            raise InvalidInput("project must be a non-empty string")
        if scope is not None:
            if path is not None:
                raise Forbidden("a scoped token imports transcripts as content, not by path")
            if scope.project is not None and project not in (None, scope.project):
                raise Forbidden(f"this token may write only to project {scope.project!r}")
            project = scope.project or project
            agent_id = scope.agent_id or agent_id
        if path is None:
            text = _text(content, self.config)
        else:
            text = self._read_confined(path, harness) if confined else self._read(path)
        importer = Importer(
            self.store, self.workspace, self.config.pipeline.max_attempts, self.clock
        )
        return importer.run(
            harness=harness, text=text, session_id=session_id, project=project,
            agent_id=agent_id, ended=ended,
        )

    def _read(self, path: Any) -> str:
        if not isinstance(path, str) or not path.strip():
            raise InvalidInput("path must be a non-empty string")
        file = Path(path).expanduser()
        try:
            found = file.is_file()
        except OSError:  # a name too long for the file system names no file
            found = False
        if not found:  # a well-formed path that names nothing: not found, not bad input
            raise NotFound(f"{path}: no such file")
        limit = self.config.sessions.max_transcript_bytes
        size = file.stat().st_size
        if size > limit:
            raise InvalidInput(f"{path}: {size} bytes; the maximum is {limit} (sessions.max_transcript_bytes)")
        try:
            return file.read_text("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise InvalidInput(f"{path}: cannot read: {exc.strerror}") from None

    def _read_confined(self, path: Any, harness: str) -> str:
        """The transcript at `path` when it is a well-formed one of `harness` inside its
        transcript folders; one Forbidden for every other case."""
        refusal = Forbidden(
            "transcript_path: without the admin permission the daemon reads only a readable,"
            " well-formed transcript inside the harness's own transcript folder; send the"
            " transcript as content instead"
        )
        file = transcript_file(path, harness) if isinstance(path, str) else None
        if file is None:
            raise refusal
        try:
            if file.stat().st_size > self.config.sessions.max_transcript_bytes:
                raise refusal
            text = file.read_text("utf-8")
            parse(harness, text)
        except (OSError, UnicodeDecodeError, InvalidInput):
            raise refusal from None
        return text

    # -- reading ----------------------------------------------------------------------------

    def list(
        self, *, scope: MemoryScope | None = None, project: str | None = None,
        harness: str | None = None, limit: int = 50, offset: int = 0,
    ) -> dict[str, Any]:
        if not 1 <= limit <= 1000 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"limit must be between 1 and 1000 and offset between 0 and {MAX_OFFSET}")
        agent, project = _narrowed(scope, project)
        rows, total = self.store.list_page(
            agent_id=agent, project=project, harness=harness, limit=limit, offset=offset
        )
        return {"items": [r.to_dict() for r in rows], "total": total, "limit": limit, "offset": offset}

    def get(
        self, session_id: str, *, scope: MemoryScope | None = None, project: str | None = None
    ) -> SessionRow:
        agent, project = _narrowed(scope, project)
        found = self.store.find(session_id, agent_id=agent, project=project)
        if not found:
            row = self.store.get(session_id)  # a session key works too
            if row is not None and _inside(row, agent, project):
                return row
            raise NotFound(f"session {session_id} not found")
        return found[0]

    def show(
        self, session_id: str, *, scope: MemoryScope | None = None, project: str | None = None
    ) -> dict[str, Any]:
        row = self.get(session_id, scope=scope, project=project)
        data = row.to_dict()
        data["messages"] = [m.to_dict() for m in self.messages(row)]
        return data

    def messages(self, row: SessionRow) -> builtins.list[Message]:
        file = workspace_file(self.workspace, row.path, TRANSCRIPTS)
        found = read_messages(file, row.message_count) if file is not None else None
        if found is None or len(found) < row.message_count:
            return parse("generic", row.content).messages if row.content.strip() else []
        return found

    def search(
        self, query: str, *, scope: MemoryScope | None = None, project: str | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        if not 1 <= limit <= 200:
            raise InvalidInput("limit must be between 1 and 200")
        agent, project = _narrowed(scope, project)
        found = self.store.search(query, agent_id=agent, project=project, limit=limit)
        items = [{**row.to_dict(), "score": round(score, 6), "snippet": snip} for row, score, snip in found]
        return {"items": items, "query": query}

    # -- recall expand ----------------------------------------------------------------------

    def forget(
        self, session_id: str, *, scope: MemoryScope | None = None, project: str | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """Remove a session for privacy: transcript, summaries, index rows; a tombstone keeps
        re-indexing from bringing its artifacts back."""
        self._check_mutable()
        row = self.get(session_id, scope=scope, project=project)
        return self.lineage.forget_session(row, reason)

    def close_idle(self, now: datetime) -> bool:
        """Close sessions with no end event and no message for sessions.inactivity_timeout_minutes
        (harnesses that skip session-end) and queue their summaries; whether any was closed."""
        before = format_ts(now - timedelta(minutes=self.config.sessions.inactivity_timeout_minutes))
        closed = self.store.close_idle(before, format_ts(now), self.config.pipeline.max_attempts)
        return closed > 0

    @property
    def lineage(self) -> Lineage:
        return Lineage(self.store, self.workspace, self.clock)

    # -- the app's operations (app.py delegates) --------------------------------------------

    def import_for(
        self, *, scope: MemoryScope | None = None, actor: Actor = Actor(), **request: Any
    ) -> dict[str, Any]:
        """Import a harness transcript (sessions/importer.py) for `actor`; see import_transcript."""
        self._check_mutable()
        return self.import_transcript(agent_id=actor.agent_id, scope=scope, **request).to_dict()

    def synthesize(self, *, now: datetime | None = None) -> dict[str, Any]:
        """Render MEMORY.md from the database now (sessions/synthesis.py); the old one is backed up."""
        self._check_mutable()
        return self.head.synthesize(now or self.clock.now())

    def reindex(self) -> dict[str, Any]:
        """Rebuild memory_artifacts from the markdown files (tombstones honoured)."""
        self._check_mutable()
        return self.lineage.reindex()

    def threads(self, *, scope: MemoryScope | None = None) -> dict[str, Any]:
        return self.lineage.threads(scope)

    def thread(
        self, key: str, *, scope: MemoryScope | None = None, actor: Actor = Actor()
    ) -> dict[str, Any]:
        return self.lineage.thread(key, scope, actor.agent_id)

    def lineage_of(self, ref: str, *, scope: MemoryScope | None = None) -> dict[str, Any]:
        """A memory, session or artifact with its lineage up (to the epoch) and down (to the
        transcripts)."""
        return self.lineage.lineage(ref, scope)

    def _check_mutable(self) -> None:
        if self.config.pipeline.mutations_frozen:
            raise Frozen()

    def excerpts(self, memories: Sequence[Memory]) -> dict[str, str]:
        """Memory id -> the transcript around it, for memories that came from a session (their
        session_id, or a source_id naming the session). Recall has already authorised the
        memories; a memory only ever reaches a session of its own agent and project."""
        pairs = {
            (m.agent_id, sid, m.project)
            for m in memories for sid in (m.session_id, m.source_id) if sid
        }
        sessions = self.store.for_memories(sorted(pairs, key=lambda p: (p[0], p[1], p[2] or "")))
        cache: dict[str, list[Message]] = {}
        out: dict[str, str] = {}
        around = self.config.sessions.expand_messages
        for memory in memories:
            for sid in (memory.session_id, memory.source_id):
                row = sessions.get((memory.agent_id, sid)) if sid else None
                if row is None:
                    continue
                if row.session_key not in cache:
                    cache[row.session_key] = self.messages(row)
                out[memory.id] = excerpt(cache[row.session_key], memory.content, around)
                break
        return out


def _narrowed(scope: MemoryScope | None, project: str | None) -> tuple[str | None, str | None]:
    """(agent, project) a read may see: the scope's, and a project filter inside it."""
    if scope is None:
        return None, project
    if scope.project is not None and project not in (None, scope.project):
        raise Forbidden(f"this token is scoped to project {scope.project!r}")
    return scope.agent_id, scope.project or project


def _inside(row: SessionRow, agent: str | None, project: str | None) -> bool:
    return (agent is None or row.agent_id == agent) and (project is None or row.project == project)


def _text(content: Any, config: Config) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string (the transcript's text)")
    limit = config.sessions.max_transcript_bytes
    if len(content.encode("utf-8")) > limit:
        raise InvalidInput(f"content is larger than {limit} bytes (sessions.max_transcript_bytes)")
    return content
