"""The memory service's transactions on SQLite (the half of `SqliteCore` that services/memory.py
writes through). Each method is one whole transaction: a new memory with its dedup, history,
links, jobs and vector; an edit with its version check; a forget, recovery or feedback. Policy
stays in the service: its `check` runs on the row read inside the transaction and raises to
refuse. store/postgres/memory.py is the same contract on PostgreSQL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from signet.errors import Conflict
from signet.store import embeddings as emb_sql
from signet.store import feedback as feedback_sql
from signet.store import fts
from signet.store import graph as graph_sql
from signet.store import history as history_sql
from signet.store import idempotency as idem_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import scope as scope_sql
from signet.store import skills as skills_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.feedback import Feedback
from signet.store.graph_store import GraphOps, SqliteGraphOps
from signet.store.idempotency import KeySpace, Recorded
from signet.store.prefixes import resolve_prefix
from signet.store.skills import SkillMemory, SkillMeta
from signet.types import Actor, Memory, MemoryFilters, MemoryScope, NewMemory, RememberResult

__all__ = [
    "Check", "Edited", "InTx", "InsertShorthand", "MemoryEdit", "SqliteMemoryOps", "Within",
    "Written",
    "check_edit", "check_version", "needs_recovery",
]

# Called on the row read inside the transaction; raises to refuse the operation.
Check = Callable[[Memory], None]
# The knowledge graph's part of a transaction, on this backend's graph statements:
# (graph ops, memory id, now) for desire paths on feedback; (graph ops, memory id) for a graph
# payload sent with a memory, applied in the insert's transaction.
InTx = Callable[[GraphOps, str, str], None]
Within = Callable[[GraphOps, str], object]


@dataclass(frozen=True, slots=True)
class Written:
    """A remember's outcome: the result, or the answer recorded under its idempotency key
    (`replayed`, nothing written). `vector_id`: the embedding row stored now, for an in-RAM
    index to add (None on a backend whose vector search is a statement)."""

    result: RememberResult | None
    vector_id: int | None = None
    replayed: Recorded | None = None


@dataclass(frozen=True, slots=True)
class MemoryEdit:
    """One edit of a memory: its new `columns`, who made it and why, and its guards: `scope`
    hides other scopes' rows, `check` sees the row first and raises to refuse, and
    `expected_version` refuses an edit of a version the caller did not read. New content
    brings its `vector` of `model` (or an embed job) and the `jobs` to run again on it."""

    columns: dict[str, Any]
    actor: Actor
    now: str
    reason: str | None = None
    scope: MemoryScope | None = None
    expected_version: int | None = None
    check: Check | None = None
    changed: Sequence[str] | None = None  # the fields history names (default: the columns)
    vector: np.ndarray | None = None
    model: str | None = None
    jobs: Sequence[str] = ()
    max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS

    def history_metadata(self) -> dict[str, Any]:
        return {"changed": sorted(self.changed if self.changed is not None else self.columns)}


@dataclass(frozen=True, slots=True)
class Edited:
    memory: Memory
    vector_id: int | None = None


def check_version(current: Memory, expected: int | None) -> None:
    """Conflict when the caller edits a version it did not read (optimistic concurrency)."""
    if expected is not None and current.version != expected:
        raise Conflict(f"memory {current.id} is at version {current.version}, not {expected}")


def check_edit(
    current: Memory, edit: MemoryEdit, live_by_hash: Callable[[str, str, str | None], str | None],
) -> None:
    """An edit's checks on the row read inside its transaction, on either backend: the
    caller's `check`, the version, and dedup per agent and project (new content, or a move to
    another project, must not meet the same text already live there; `live_by_hash` finds it
    in this backend's dialect)."""
    columns = edit.columns
    if edit.check is not None:
        edit.check(current)
    check_version(current, edit.expected_version)
    if "content_hash" in columns or "project" in columns:
        other = live_by_hash(
            columns.get("content_hash", current.content_hash) or "", current.agent_id,
            columns.get("project", current.project),
        )
        if other and other != current.id:
            raise Conflict(f"memory {other} already holds this content")


def record_feedback(
    conn: Executes, graph: GraphOps, memory_id: str, *, feedback_type: str,
    correction_text: str | None, session_id: str | None, actor: str | None, agent_id: str,
    now: str, used: bool, in_tx: InTx | None, dialect: Dialect = SQLITE,
) -> Feedback:
    """A verdict on a memory inside the caller's transaction, on either backend: the feedback
    row; with `used`, an access and a use of the skill the memory indexes (its importance back
    at 1); `in_tx` (the graph's learning) in the same transaction."""
    recorded = feedback_sql.add(
        conn, memory_id=memory_id, feedback_type=feedback_type,
        correction_text=correction_text, session_id=session_id, actor=actor,
        agent_id=agent_id, now=now, dialect=dialect,
    )
    if used:
        mem_sql.touch(conn, [memory_id], now, dialect)
    if in_tx is not None:
        in_tx(graph, memory_id, now)
    if used and skills_sql.record_use_for_memory(conn, memory_id, now, dialect) is not None:
        skills_sql.set_importance(conn, memory_id, 1.0, dialect)
    return recorded


def needs_recovery(
    current: Memory, check: Check | None,
    live_by_hash: Callable[[str, str, str | None], str | None],
) -> bool:
    """A recovery's checks on the row read inside its transaction, on either backend: the
    caller's `check`; False when the memory is not deleted (nothing to do); Conflict when the
    same content is live again in its scope."""
    if check is not None:
        check(current)
    if not current.is_deleted:
        return False
    other = live_by_hash(current.content_hash or "", current.agent_id, current.project)
    if other:
        raise Conflict(f"memory {other} already holds this content")
    return True


class InsertShorthand:
    """`insert_memory`: `write_memory` answering (id, deduped), for callers that need no more
    (contract tests, the store benchmark); both backends' memory operations inherit it."""

    def insert_memory(self, memory: NewMemory, **kwargs: Any) -> tuple[str, bool]:
        written: Written = self.write_memory(memory, **kwargs)  # type: ignore[attr-defined]
        result = written.result
        assert result is not None, "insert_memory takes no idempotency key"
        return result.id, result.deduped


class FeedbackOps(ABC):
    """`add_feedback` on either backend: the memory read (and locked where rows lock) in one
    write transaction, then `record_feedback` in the backend's dialect. A backend gives the
    transaction, its graph operations over it, `_visible` and its dialect."""

    dialect: Dialect

    @abstractmethod
    def _feedback_tx(self) -> AbstractContextManager[Any]:
        """Given by the backend."""

    @abstractmethod
    def _graph_ops(self, conn: Any) -> GraphOps:
        """Given by the backend."""

    @abstractmethod
    def _visible(self, conn: Any, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        """Given by the backend."""

    def add_feedback(
        self, memory_id: str, *, feedback_type: str, correction_text: str | None,
        session_id: str | None, actor: str | None, agent_id: str, now: str,
        scope: MemoryScope | None = None, used: bool = False, in_tx: InTx | None = None,
    ) -> Feedback | None:
        """Record a verdict on a memory (None when it is unknown or out of scope). `used`: the
        agent used it, an access, and a use of the skill the memory indexes (its importance
        back at 1)."""
        with self._feedback_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None:
                return None
            return record_feedback(
                conn, self._graph_ops(conn), current.id, feedback_type=feedback_type,
                correction_text=correction_text, session_id=session_id, actor=actor,
                agent_id=agent_id, now=now, used=used, in_tx=in_tx, dialect=self.dialect,
            )


class SqliteMemoryOps(InsertShorthand, FeedbackOps):
    """The memory service's transactions over `self.store` (mixed into SqliteCore)."""

    store: Store
    dialect = SQLITE

    @property
    def in_write_tx(self) -> bool:
        """Whether this thread is inside a caller's write transaction (a worker's): what this
        writes commits with it, or rolls back with it."""
        return self.store.in_write_tx

    def transaction(self) -> AbstractContextManager[Connection]:
        return self.store.write_tx()

    def reading(self) -> AbstractContextManager[Connection]:
        return nullcontext(self.store.reader())

    def resolve_id(
        self, table: str, ref: str, *, noun: str, scope: MemoryScope | None = None
    ) -> str:
        return resolve_prefix(self.store.reader(), table, ref, noun=noun, scope=scope)

    def write_memory(
        self, memory: NewMemory, *, storage: str, normalized: str, content_hash: str,
        actor: Actor, now: str, vector: np.ndarray | None = None, model: str | None = None,
        jobs: Sequence[str] = (), max_attempts: int = jobs_sql.DEFAULT_MAX_ATTEMPTS,
        extraction_status: str = "none", link_entities: bool = True, key: KeySpace | None = None,
        within: Within | None = None,
    ) -> Written:
        with self.store.write_tx() as conn:
            # Checked again under the write lock: a racing retry may have landed meanwhile.
            if key is not None and (recorded := idem_sql.get(conn, key)) is not None:
                return Written(None, replayed=recorded)
            # The row's model and the answer's `embedded` say what this write did (a vector
            # made now), never whether another scope stored a vector of the same text.
            memory_id, deduped = mem_sql.insert(
                conn, memory, storage=storage, normalized=normalized, content_hash=content_hash,
                now=now, embedding_model=model if vector is not None else None,
                extraction_status=extraction_status,
            )
            embedded = vector is not None or (
                deduped and model is not None and _embedded(conn, memory_id, content_hash, model)
            )
            if deduped:
                history_sql.record(
                    conn, memory_id, "none", actor, now, new_content=storage,
                    reason="duplicate content", metadata={"dedupedExistingId": memory_id},
                )
            else:
                history_sql.record(conn, memory_id, "created", actor, now, new_content=storage)
                if link_entities:  # existing entities only, no LLM, same tx
                    graph_sql.link_known_entities(conn, memory_id, memory.agent_id, storage, now)
                for job_type in jobs:
                    jobs_sql.enqueue(conn, job_type, memory_id=memory_id, now=now,
                                     max_attempts=max_attempts)
            vector_id = _vector_or_job(conn, content_hash, vector, model, memory_id, now,
                                       max_attempts, fresh=not deduped)
            if within is not None:
                within(SqliteGraphOps(conn), memory_id)
            stored = mem_sql.get(conn, memory_id)
            assert stored is not None
            result = RememberResult(memory_id, deduped, stored, embedded=embedded)
            if key is not None:
                idem_sql.put(conn, key, content_hash=content_hash, memory_id=memory_id,
                             response=idem_sql.result_json(result), now=now)
        return Written(result, vector_id)

    def idempotent(self, key: KeySpace) -> Recorded | None:
        """The answer recorded under `key`, read before any write (the write checks again)."""
        return idem_sql.get(self.store.reader(), key)

    def get_memory(self, memory_id: str, scope: MemoryScope | None = None) -> Memory | None:
        conn = self.store.reader()
        if scope is not None and not scope_sql.contains(conn, memory_id, scope):
            return None
        return mem_sql.get(conn, memory_id)

    def update_memory(self, memory_id: str, edit: MemoryEdit) -> Edited | None:
        columns, now = edit.columns, edit.now
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, edit.scope)
            if current is None:
                return None
            memory_id = current.id
            check_edit(current, edit, lambda *where: mem_sql.find_live_by_hash(conn, *where))
            mem_sql.update(conn, memory_id, columns, now)
            history_sql.record(
                conn, memory_id, "updated", edit.actor, now, old_content=current.content,
                new_content=columns.get("content", current.content), reason=edit.reason,
                metadata=edit.history_metadata(),
            )
            vector_id = None
            if "content_hash" in columns:
                vector_id = _vector_or_job(conn, columns["content_hash"], edit.vector, edit.model,
                                           memory_id, now, edit.max_attempts, fresh=True)
            if "content" in columns:
                self._relink(conn, current, columns["content"], now, edit.jobs, edit.max_attempts)
            updated = mem_sql.get(conn, memory_id)
        assert updated is not None
        return Edited(updated, vector_id)

    @staticmethod
    def _relink(
        conn: Any, memory: Memory, content: str, now: str, jobs: Sequence[str], max_attempts: int
    ) -> None:
        """New content names other things: the graph forgets what the old text named, the
        inline linker links what the new text names, hints of the old text go (they would
        find it wrongly), and extraction and hints run again (`jobs`)."""
        graph_sql.unlink_memory(conn, memory.id)
        graph_sql.link_known_entities(conn, memory.id, memory.agent_id, content, now)
        mem_sql.set_hints(conn, memory.id, "")
        for job_type in jobs:
            jobs_sql.enqueue(conn, job_type, memory_id=memory.id, now=now,
                             max_attempts=max_attempts)
            if job_type == "extract":
                mem_sql.set_extraction_status(conn, memory.id, "pending", None)

    def forget(
        self, memory_id: str, *, actor: Actor, now: str, reason: str | None = None,
        scope: MemoryScope | None = None, check: Check | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Memory | None:
        """Soft delete with a 'deleted' history row; a deleted memory is returned as is, an
        unknown or out-of-scope one is None. `check` sees the live row first."""
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None or current.is_deleted:
                return current
            if check is not None:
                check(current)
            mem_sql.soft_delete(conn, current.id, now)
            history_sql.record(conn, current.id, "deleted", actor, now,
                               old_content=current.content, reason=reason, metadata=metadata)
            return mem_sql.get(conn, current.id)

    def recover(
        self, memory_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None,
        reason: str | None = None, check: Check | None = None,
    ) -> Memory | None:
        """Undo a soft delete; Conflict when the same content is live again in its scope. A
        memory not deleted is returned as is (after `check`, which may refuse it)."""
        with self.store.write_tx() as conn:
            current = self._visible(conn, memory_id, scope)
            if current is None or not needs_recovery(
                    current, check, lambda *where: mem_sql.find_live_by_hash(conn, *where)):
                return current
            mem_sql.recover(conn, current.id, now)
            history_sql.record(conn, current.id, "recovered", actor, now,
                               new_content=current.content, reason=reason)
            return mem_sql.get(conn, current.id)

    def _visible(self, conn: Any, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        """The memory `memory_id` (a short id resolved, in scope) read inside the transaction."""
        memory_id = resolve_prefix(conn, "memories", memory_id, noun="memory", scope=scope)
        if scope is not None and not scope_sql.contains(conn, memory_id, scope):
            return None
        return mem_sql.get(conn, memory_id)

    # -- feedback and accesses -----------------------------------------------------------------

    def _feedback_tx(self) -> AbstractContextManager[Connection]:
        return self.store.write_tx()

    def _graph_ops(self, conn: Connection) -> GraphOps:
        return SqliteGraphOps(conn)

    def feedback_for(self, memory_id: str) -> list[Feedback]:
        return feedback_sql.for_memory(self.store.reader(), memory_id)

    def add_accesses(self, rows: Sequence[tuple[str, int, str]]) -> None:
        """(memory id, how many accesses, the latest) in one transaction; the latest time wins."""
        with self.store.write_tx() as conn:
            mem_sql.add_accesses(conn, rows)

    def match_all(self, text: str, filters: MemoryFilters, limit: int) -> list[str]:
        """Ids of memories holding every word of `text` (batch forget's strict match)."""
        return fts.match_all(self.store.reader(), text, filters, limit)

    def mark_stale_except(self, model: str, dimensions: int) -> int:
        with self.store.write_tx() as conn:
            return emb_sql.mark_stale_except(conn, model, dimensions)

    # -- skills (signet/skills.py) -----------------------------------------------------------

    def skill_metas(self, agent_id: str) -> list[SkillMeta]:
        return skills_sql.list_meta(self.store.reader(), agent_id)

    def skill_memory(self, name: str, agent_id: str) -> SkillMemory | None:
        return skills_sql.skill_memory(self.store.reader(), name, agent_id)

    def upsert_skill_meta(
        self, *, name: str, agent_id: str, path: str, role: str | None, decay_rate: float,
        now: str,
    ) -> None:
        with self.store.write_tx() as conn:
            skills_sql.upsert_meta(conn, name=name, agent_id=agent_id, path=path, role=role,
                                   decay_rate=decay_rate, now=now)

    def delete_skill_meta(self, name: str, agent_id: str) -> bool:
        with self.store.write_tx() as conn:
            return skills_sql.delete_meta(conn, name, agent_id)

    def set_importances(self, moves: Sequence[tuple[str, float]]) -> None:
        """Skill decay: each memory's importance, no new version (decay is not an edit)."""
        with self.store.write_tx() as conn:
            for memory_id, importance in moves:
                skills_sql.set_importance(conn, memory_id, importance)


def _vector_or_job(
    conn: Any, content_hash: str, vector: np.ndarray | None, model: str | None, memory_id: str,
    now: str, max_attempts: int, *, fresh: bool = False,
) -> int | None:
    """The vector stored (its embedding id) when the hash has none yet, else None; without a
    vector, an `embed` job. A `fresh` memory (new in its scope) gets its job whether or not
    another scope's vector of the same text is stored: the write does what it would do if
    the text were new everywhere, and the embed worker finds the vector there."""
    if model is None:
        return None
    stored = emb_sql.has_current(conn, content_hash, model)
    if vector is None:
        if fresh or not stored:
            jobs_sql.enqueue(conn, "embed", memory_id=memory_id, now=now,
                             max_attempts=max_attempts)
        return None
    if stored:
        return None
    return emb_sql.upsert(conn, content_hash, vector, model=model, now=now, source_id=memory_id)


def _embedded(conn: Any, memory_id: str, content_hash: str, model: str) -> bool:
    """Whether the caller's own memory (a duplicate it wrote before) has its vector: stored,
    and no embed job of its own still waiting (until then the vector could be another
    scope's)."""
    return emb_sql.has_current(conn, content_hash, model) and not jobs_sql.waiting(
        conn, "embed", memory_id)
