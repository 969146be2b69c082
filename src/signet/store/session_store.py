"""The sessions store seam: transcripts and their search, the summary queue, the artifacts' index
with its tombstones, and the reads MEMORY.md is rendered from. Each multi-statement transaction
of the services is one method, so each backend keeps it whole. `SqliteSessions` is here,
PostgreSQL's in store/postgres/sessions.py; shared statements live in store/sessions.py,
artifacts.py and head.py. Scope None means no constraint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import Any, Protocol

from signet.errors import Conflict
from signet.store import artifacts as art_sql
from signet.store import head as head_sql
from signet.store import memories as mem_sql
from signet.store import scope as scope_sql
from signet.store import sessions as sessions_sql
from signet.store.artifacts import ArtifactRow
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.prefixes import resolve_prefix
from signet.store.sessions import SessionRow, SummaryJob, SummaryOutcome
from signet.types import Memory, MemoryScope

__all__ = ["SessionStore", "SqliteSessions"]


class SessionStore(Protocol):
    """The lineage's tables on one backend; every method is one transaction."""

    backend: str

    # -- transcripts ------------------------------------------------------------------------
    def get(self, key: str) -> SessionRow | None: ...

    def find(
        self, session_id: str, *, agent_id: str | None, project: str | None
    ) -> list[SessionRow]:
        """Sessions with this harness id inside the scope, newest first."""
        ...

    def list_page(
        self, *, agent_id: str | None, project: str | None, harness: str | None, limit: int,
        offset: int,
    ) -> tuple[list[SessionRow], int]: ...

    def search(
        self, query: str, *, agent_id: str | None, project: str | None, limit: int
    ) -> list[tuple[SessionRow, float, str]]:
        """(session, score, snippet with the matches in [brackets]), best first. A scoped
        caller's scores come from its own slice's statistics only."""
        ...

    def for_memories(
        self, pairs: Sequence[tuple[str, str, str | None]]
    ) -> dict[tuple[str, str], SessionRow]:
        """(agent, session id, memory project) -> the newest session of that agent and id
        (inside the project when the memory has one)."""
        ...

    def save_import(
        self, row: SessionRow, *, created: bool, summary_trigger: str | None, now: str,
        max_attempts: int,
    ) -> tuple[SessionRow, str | None]:
        """Insert (`created`) or update the imported session's row and, with a trigger, queue
        its summary (a no-op when one is live), in one transaction; the stored row and the new
        job's id. Creating a session another process created meanwhile is a Conflict (the
        caller imports again, which then appends or finds it unchanged)."""
        ...

    def close_idle(self, before: str, now: str, max_attempts: int) -> int:
        """Close the open sessions last active before `before` and queue their summaries
        ("inactivity"), in one transaction; how many were closed."""
        ...

    def memories_of(
        self, agent_id: str, session_id: str, project: str | None, limit: int = 200
    ) -> list[str]:
        """Ids of the live memories that came from the session (session_id or source_id)."""
        ...

    def memory(self, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        """A memory inside the scope, deleted or not; None outside it."""
        ...

    def resolve_memory(self, ref: str, scope: MemoryScope | None) -> str:
        """The memory id `ref` names inside the scope: the one id it starts (a short id), or
        `ref` unchanged when it is no prefix. NotFound when no id starts with it; InvalidInput
        when several do."""
        ...

    # -- the summary queue (workers/summary_worker.py) ---------------------------------------
    def lease_summary(self, now: str) -> SummaryJob | None:
        """Claim the oldest pending summary job; a job is leased by one worker of all."""
        ...

    def fail_summary(self, job: SummaryJob, error: str, now: str) -> None:
        """Back to pending (dead after its last attempt), if this lease still holds it."""
        ...

    def reap_summary_leases(self, now: str, timeout_ms: int) -> int: ...

    def covered(self, session_key: str) -> int:
        """Messages of the session its completed summary jobs already summarised."""
        ...

    def finish_summary(self, job: SummaryJob, outcome: SummaryOutcome, now: str) -> None:
        """Complete the job with the outcome's result (plus `memory_id`, the id its memory()
        wrote), index the artifact and set the session's summary status, in one transaction;
        RuntimeError, writing nothing of it, when the lease no longer holds the job."""
        ...

    def add_condensed(self, row: ArtifactRow, children: Sequence[str]) -> None:
        """Index an arc or epoch and make it its children's parent."""
        ...

    def known_entities(self, agent_id: str, names: dict[str, str]) -> list[str]: ...

    def unseen_terms(self, terms: set[str]) -> int:
        """How many of `terms` no stored memory contains."""
        ...

    def dominant_community(self, agent_id: str, canonical_names: list[str]) -> str | None: ...

    # -- artifacts --------------------------------------------------------------------------
    def artifact(self, agent_id: str, path: str) -> ArtifactRow | None: ...

    def artifact_by_id(self, artifact_id: str) -> ArtifactRow | None: ...

    def artifacts_of_session(self, session_key: str) -> list[ArtifactRow]: ...

    def in_thread(
        self, agent_id: str, thread_key: str, kind: str, *, uncondensed: bool = False
    ) -> list[ArtifactRow]: ...

    def threads(self, agent_id: str | None, project: str | None) -> list[dict[str, Any]]: ...

    def tombstoned(self) -> set[tuple[str, str]]: ...

    def replace_artifacts(self, rows: Mapping[tuple[str, str], ArtifactRow]) -> int:
        """Make the index exactly `rows` ((agent, path) -> row): the others are deleted; how
        many were deleted."""
        ...

    def forget_session(
        self, session: SessionRow, artifact_paths: Sequence[str], removed: Sequence[str],
        reason: str | None, now: str,
    ) -> None:
        """Delete the session's row and its artifacts' rows and tombstone it, naming `removed`."""
        ...

    # -- the head (MEMORY.md) -----------------------------------------------------------------
    def head_memories(self, agent_id: str) -> list[dict[str, Any]]: ...

    def head_projects(self, agent_id: str, since: str) -> list[dict[str, Any]]: ...

    def latest_gists(self, agent_id: str) -> dict[str | None, str]: ...

    def open_questions(self, agent_id: str, limit: int = 3) -> list[str]: ...

    def latest_summaries(self, agent_id: str, limit: int = 3) -> list[str]:
        """The markdown of the newest session summaries, newest first."""
        ...

    def head_entities(self, agent_id: str, limit: int = 30) -> list[dict[str, Any]]: ...

    def last_change(self) -> str | None: ...

    def one_at_a_time(self, task: str) -> Any:
        """A context manager: True inside when this process holds `task`'s lock (across every
        process on the store), False when another holds it (the caller skips its run)."""
        ...


class SessionReads:
    """The SessionStore reads both backends share: the store/ functions in the backend's
    dialect over its reading connection (`_reading`, rows read by column name)."""

    dialect: Dialect

    def _reading(self) -> AbstractContextManager[Executes]:
        raise NotImplementedError

    def get(self, key: str) -> SessionRow | None:
        with self._reading() as conn:
            return sessions_sql.get(conn, key, dialect=self.dialect)

    def find(
        self, session_id: str, *, agent_id: str | None, project: str | None
    ) -> list[SessionRow]:
        with self._reading() as conn:
            return sessions_sql.find(conn, session_id, agent_id=agent_id, project=project,
                                     dialect=self.dialect)

    def list_page(
        self, *, agent_id: str | None, project: str | None, harness: str | None, limit: int,
        offset: int,
    ) -> tuple[list[SessionRow], int]:
        with self._reading() as conn:
            return sessions_sql.list_page(conn, agent_id=agent_id, project=project,
                                          harness=harness, limit=limit, offset=offset,
                                          dialect=self.dialect)

    # -- artifacts --------------------------------------------------------------------------
    def artifact(self, agent_id: str, path: str) -> ArtifactRow | None:
        with self._reading() as conn:
            return art_sql.get(conn, agent_id, path, self.dialect)

    def artifact_by_id(self, artifact_id: str) -> ArtifactRow | None:
        with self._reading() as conn:
            return art_sql.by_id(conn, artifact_id, self.dialect)

    def artifacts_of_session(self, session_key: str) -> list[ArtifactRow]:
        with self._reading() as conn:
            return art_sql.of_session(conn, session_key, self.dialect)

    def in_thread(
        self, agent_id: str, thread_key: str, kind: str, *, uncondensed: bool = False
    ) -> list[ArtifactRow]:
        with self._reading() as conn:
            return art_sql.in_thread(conn, agent_id, thread_key, kind, uncondensed=uncondensed,
                                     dialect=self.dialect)

    def threads(self, agent_id: str | None, project: str | None) -> list[dict[str, Any]]:
        with self._reading() as conn:
            return art_sql.threads(conn, agent_id, project, self.dialect)

    def tombstoned(self) -> set[tuple[str, str]]:
        with self._reading() as conn:
            return art_sql.tombstoned(conn)

    # -- the head (MEMORY.md) -----------------------------------------------------------------
    def head_memories(self, agent_id: str) -> list[dict[str, Any]]:
        with self._reading() as conn:
            return head_sql.memories(conn, agent_id, self.dialect)

    def head_projects(self, agent_id: str, since: str) -> list[dict[str, Any]]:
        with self._reading() as conn:
            return head_sql.projects(conn, agent_id, since, self.dialect)

    def latest_gists(self, agent_id: str) -> dict[str | None, str]:
        with self._reading() as conn:
            return head_sql.latest_gists(conn, agent_id, self.dialect)

    def open_questions(self, agent_id: str, limit: int = 3) -> list[str]:
        with self._reading() as conn:
            return head_sql.open_questions(conn, agent_id, limit, self.dialect)

    def latest_summaries(self, agent_id: str, limit: int = 3) -> list[str]:
        with self._reading() as conn:
            return head_sql.latest_summaries(conn, agent_id, limit, self.dialect)

    def head_entities(self, agent_id: str, limit: int = 30) -> list[dict[str, Any]]:
        with self._reading() as conn:
            return head_sql.entities(conn, agent_id, limit, self.dialect)

    def last_change(self) -> str | None:
        with self._reading() as conn:
            return head_sql.last_change(conn)


class SqliteSessions(SessionReads):
    """SessionStore on the SQLite store: the store/ functions. One writer per
    file, so `one_at_a_time` is the writer's: always granted."""

    backend, dialect = "sqlite", SQLITE

    def __init__(self, store: Store) -> None:
        self.store = store

    def _reading(self) -> AbstractContextManager[Connection]:
        return nullcontext(self.store.reader())

    # -- transcripts ------------------------------------------------------------------------
    def search(
        self, query: str, *, agent_id: str | None, project: str | None, limit: int
    ) -> list[tuple[SessionRow, float, str]]:
        return sessions_sql.search(self.store.reader(), query, agent_id=agent_id,
                                   project=project, limit=limit)

    def for_memories(
        self, pairs: Sequence[tuple[str, str, str | None]]
    ) -> dict[tuple[str, str], SessionRow]:
        return sessions_sql.for_memories(self.store.reader(), list(pairs))

    def save_import(
        self, row: SessionRow, *, created: bool, summary_trigger: str | None, now: str,
        max_attempts: int,
    ) -> tuple[SessionRow, str | None]:
        job = None
        with self.store.write_tx() as conn:
            if created:
                if sessions_sql.get(conn, row.session_key) is not None:
                    raise Conflict(f"session {row.session_id} was imported by another process"
                                   " at the same moment; import it again")
                sessions_sql.insert(conn, row)
            else:
                sessions_sql.update(
                    conn, row.session_key, content=row.content, raw_hash=row.raw_hash,
                    content_hash=row.content_hash, message_count=row.message_count,
                    last_event_at=row.last_event_at, ended_at=row.ended_at, updated_at=now,
                )
            if summary_trigger is not None:
                job = sessions_sql.enqueue_summary(conn, row, trigger=summary_trigger, now=now,
                                                   max_attempts=max_attempts)
            stored = sessions_sql.get(conn, row.session_key)
        assert stored is not None
        return stored, job

    def close_idle(self, before: str, now: str, max_attempts: int) -> int:
        closed = 0
        with self.store.write_tx() as conn:
            for row in sessions_sql.open_idle(conn, before):
                sessions_sql.update(conn, row.session_key, ended_at=row.last_event_at,
                                    updated_at=now)
                sessions_sql.enqueue_summary(
                    conn, _ended(row), trigger="inactivity", now=now, max_attempts=max_attempts
                )
                closed += 1
        return closed

    def memories_of(
        self, agent_id: str, session_id: str, project: str | None, limit: int = 200
    ) -> list[str]:
        return sessions_sql.memories_of(self.store.reader(), agent_id, session_id, project,
                                        limit)

    def memory(self, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        conn = self.store.reader()
        if scope is not None and not scope_sql.contains(conn, memory_id, scope):
            return None
        return mem_sql.get(conn, memory_id)

    def resolve_memory(self, ref: str, scope: MemoryScope | None) -> str:
        return resolve_prefix(self.store.reader(), "memories", ref, noun="memory", scope=scope)

    # -- the summary queue ------------------------------------------------------------------
    def lease_summary(self, now: str) -> SummaryJob | None:
        if not sessions_sql.summary_pending(self.store.reader()):
            return None  # an idle worker reads instead of queueing for the one writer
        with self.store.write_tx() as conn:
            return sessions_sql.lease_summary(conn, now)

    def fail_summary(self, job: SummaryJob, error: str, now: str) -> None:
        with self.store.write_tx() as conn:
            if sessions_sql.owns_summary(conn, job):
                sessions_sql.fail_summary(conn, job, error, now)

    def reap_summary_leases(self, now: str, timeout_ms: int) -> int:
        with self.store.write_tx() as conn:
            return sessions_sql.reap_summary_leases(conn, now, timeout_ms)

    def covered(self, session_key: str) -> int:
        return sessions_sql.covered(self.store.reader(), session_key)

    def finish_summary(self, job: SummaryJob, outcome: SummaryOutcome, now: str) -> None:
        with self.store.write_tx() as conn:
            sessions_sql.finish_summary(conn, conn, job, outcome, now)

    def add_condensed(self, row: ArtifactRow, children: Sequence[str]) -> None:
        with self.store.write_tx() as conn:
            art_sql.upsert(conn, row)
            art_sql.set_parent(conn, row.agent_id, list(children), row.source_path)

    def known_entities(self, agent_id: str, names: dict[str, str]) -> list[str]:
        return sessions_sql.known_entities(self.store.reader(), agent_id, names)

    def unseen_terms(self, terms: set[str]) -> int:
        return sessions_sql.unseen_terms(self.store.reader(), terms)

    def dominant_community(self, agent_id: str, canonical_names: list[str]) -> str | None:
        return sessions_sql.dominant_community(self.store.reader(), agent_id, canonical_names)

    # -- artifacts --------------------------------------------------------------------------
    def replace_artifacts(self, rows: Mapping[tuple[str, str], ArtifactRow]) -> int:
        with self.store.write_tx() as conn:
            stale = [key for key in art_sql.all_paths(conn) if key not in rows]
            for agent_id, path in stale:
                art_sql.delete(conn, agent_id, [path])
            for row in rows.values():
                art_sql.upsert(conn, row)
        return len(stale)

    def forget_session(
        self, session: SessionRow, artifact_paths: Sequence[str], removed: Sequence[str],
        reason: str | None, now: str,
    ) -> None:
        with self.store.write_tx() as conn:
            art_sql.delete(conn, session.agent_id, artifact_paths)
            sessions_sql.delete(conn, session.session_key)
            art_sql.tombstone(conn, session.agent_id, session.session_key, list(removed),
                              reason, now)

    @contextmanager
    def one_at_a_time(self, task: str) -> Iterator[bool]:
        yield True


def _ended(row: SessionRow) -> SessionRow:
    return replace(row, ended_at=row.last_event_at)
