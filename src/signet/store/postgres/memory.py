"""The memory service's transactions on PostgreSQL: store/memory_ops.py's contract, mixed into
`PostgresCore`. Where SQLite relies on its one writer, the memory an edit, forget, recovery or
feedback is about is locked `FOR UPDATE`; a racing insert meets the unique index of live hashes,
and two daemons answering one retry record one idempotent answer. Accesses are added in one
statement, never read-then-written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from signet.errors import Conflict, StoreError
from signet.store import feedback as feedback_sql
from signet.store import skills as skills_sql
from signet.store.dialect import POSTGRES
from signet.store.feedback import Feedback
from signet.store.idempotency import KeySpace, Recorded, result_json
from signet.store.jobs import DEFAULT_MAX_ATTEMPTS
from signet.store.memories import new_id, soft_delete
from signet.store.memories import recover as recover_row
from signet.store.memory_ops import (
    Check,
    Edited,
    FeedbackOps,
    InsertShorthand,
    MemoryEdit,
    Within,
    Written,
    check_edit,
    needs_recovery,
)
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres import lexical
from signet.store.postgres.filters import scope_sql
from signet.store.postgres.graph import PostgresGraphOps
from signet.store.prefixes import MAX_LISTED, resolve_with
from signet.store.skills import (
    SOURCE_TYPE,
    SkillMemory,
    SkillMeta,
    source_id,
)
from signet.types import Actor, Memory, MemoryFilters, MemoryScope, NewMemory, RememberResult, dumps

_KEY_WHERE = (
    "key = %s AND scope_agent IS NOT DISTINCT FROM %s AND scope_project IS NOT DISTINCT FROM %s"
)
_SKILL = ("skill_name, agent_id, decay_rate, use_count, last_used_at, role_classification,"
          " filesystem_path, created_at, updated_at")
__all__ = ["PostgresMemoryOps"]

_PREFIX_TABLES = frozenset({"memories", "memory_jobs", "memory_review_queue"})


class PostgresMemoryOps(InsertShorthand, FeedbackOps):
    """The memory service's transactions (PostgresCore provides the pool and the row helpers)."""

    dialect = POSTGRES

    # Provided by PostgresCore (the pool, and the row helpers its own reads use too).
    if TYPE_CHECKING:
        def _conn(self) -> AbstractContextManager[psycopg.Connection]: ...
        def _get(self, conn: psycopg.Connection, memory_id: str, scope: MemoryScope | None,
                 *, lock: bool = False) -> Memory | None: ...
        def _live_by_hash(self, conn: psycopg.Connection, content_hash: str, agent_id: str,
                          project: str | None) -> str | None: ...
        def _record(self, conn: psycopg.Connection, memory_id: str, event: str, actor: Actor,
                    now: str, *, old_content: str | None = None, new_content: str | None = None,
                    reason: str | None = None,
                    metadata: dict[str, Any] | None = None) -> None: ...
        def _has_vector(self, conn: psycopg.Connection, content_hash: str,
                        model: str) -> bool: ...
        def _upsert_vector(self, conn: psycopg.Connection, content_hash: str,
                           vector: np.ndarray, model: str, now: str,
                           source_id: str) -> None: ...
        def _ensure_index(self, dimensions: int) -> None: ...
        @property
        def in_transaction(self) -> bool: ...

    @property
    def in_write_tx(self) -> bool:
        """Whether this thread is inside `PostgresCore.transaction()` (a pipeline worker's write):
        what this writes commits with it, or rolls back with it."""
        return self.in_transaction

    def resolve_id(
        self, table: str, ref: str, *, noun: str, scope: MemoryScope | None = None
    ) -> str:
        with self._conn() as conn:
            return self._resolve(conn, table, ref, noun, scope)

    def _resolve(
        self, conn: psycopg.Connection, table: str, ref: str, noun: str,
        scope: MemoryScope | None,
    ) -> str:
        if table not in _PREFIX_TABLES:
            raise ValueError(f"no short ids for table {table} on this backend")

        def lookup(prefix: str) -> list[str]:
            # A hex prefix (store/prefixes.py checked it): no LIKE wildcard can be in it.
            where, params = scope_sql(scope if table == "memories" else None, alias=table)
            rows = conn.execute(
                f"SELECT id FROM {table} WHERE id LIKE %s AND {where} ORDER BY id COLLATE \"C\""
                " LIMIT %s", [prefix + "%", *params, MAX_LISTED + 1],
            ).fetchall()
            return [str(r[0]) for r in rows]

        return resolve_with(lookup, ref, noun)

    # -- remember ----------------------------------------------------------------------------

    def write_memory(
        self, memory: NewMemory, *, storage: str, normalized: str, content_hash: str,
        actor: Actor, now: str, vector: np.ndarray | None = None, model: str | None = None,
        jobs: Sequence[str] = (), max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        extraction_status: str = "none", link_entities: bool = True, key: KeySpace | None = None,
        within: Within | None = None,
    ) -> Written:
        with self._conn() as conn, conn.transaction():
            if key is not None and (recorded := _recorded(conn, key, lock=True)) is not None:
                return Written(None, replayed=recorded)
            # The row's model and the answer's `embedded` say what this write did (a vector
            # made now), never whether another scope stored a vector of the same text.
            memory_id, deduped = self._insert(conn, memory, storage, normalized, content_hash,
                                              now, model if vector is not None else None,
                                              extraction_status)
            embedded = vector is not None or (
                deduped and model is not None and self._embedded(conn, memory_id, content_hash,
                                                                 model)
            )
            if deduped:
                self._record(conn, memory_id, "none", actor, now, new_content=storage,
                             reason="duplicate content",
                             metadata={"dedupedExistingId": memory_id})
            else:
                self._record(conn, memory_id, "created", actor, now, new_content=storage)
                if link_entities:  # the inline entity linker (store/graph.py), same transaction
                    PostgresGraphOps(conn).link_known_entities(memory_id, memory.agent_id, storage, now)
                for job_type in jobs:
                    pg_jobs.enqueue(conn, job_type, memory_id=memory_id, now=now,
                                    max_attempts=max_attempts)
            self._vector_or_job(conn, content_hash, vector, model, memory_id, now, max_attempts,
                                fresh=not deduped)
            if within is not None:
                within(PostgresGraphOps(conn), memory_id)
            stored = self._get(conn, memory_id, None)
            assert stored is not None
            result = RememberResult(memory_id, deduped, stored, embedded=embedded)
            if key is not None:
                conn.execute(
                    "INSERT INTO idempotency_scoped_keys (key, scope_agent, scope_project,"
                    " content_hash, memory_id, response, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (key.key, key.agent, key.project, content_hash, memory_id,
                     result_json(result), now),
                )
        if vector is not None:
            self._ensure_index(int(np.asarray(vector).shape[-1]))
        return Written(result)

    def _insert(
        self, conn: psycopg.Connection, memory: NewMemory, storage: str, normalized: str,
        content_hash: str, now: str, embedded: str | None, extraction_status: str,
    ) -> tuple[str, bool]:
        row = conn.execute(
            "INSERT INTO memories (id, content, type, category, content_hash,"
            " normalized_content, confidence, importance, source_id, source_type, tags, who,"
            " why, project, agent_id, session_id, created_at, updated_at, event_at,"
            " embedding_model, pinned, extraction_status) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,"
            "%s,%s::jsonb,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING RETURNING id",
            (new_id(), storage, memory.type, memory.category, content_hash, normalized,
             memory.confidence, memory.importance, memory.source_id, memory.source_type,
             dumps(list(memory.tags)), memory.who, memory.why, memory.project,
             memory.agent_id, memory.session_id, now, now, memory.event_at, embedded,
             bool(memory.pinned), extraction_status),
        ).fetchone()
        if row is not None:
            return str(row[0]), False
        existing = self._live_by_hash(conn, content_hash, memory.agent_id, memory.project)
        if existing is None:
            raise StoreError("insert refused by a constraint other than dedup")
        return existing, True

    def _vector_or_job(
        self, conn: psycopg.Connection, content_hash: str, vector: np.ndarray | None,
        model: str | None, memory_id: str, now: str, max_attempts: int, *, fresh: bool = False,
    ) -> None:
        """As store/memory_ops.py `_vector_or_job`: a `fresh` memory without a vector gets its
        embed job even when another scope's vector of the same text is stored."""
        if model is None:
            return
        stored = self._has_vector(conn, content_hash, model)
        if vector is None:
            if fresh or not stored:
                pg_jobs.enqueue(conn, "embed", memory_id=memory_id, now=now,
                                max_attempts=max_attempts)
        elif not stored:
            self._upsert_vector(conn, content_hash, vector, model, now, memory_id)

    def _embedded(
        self, conn: psycopg.Connection, memory_id: str, content_hash: str, model: str
    ) -> bool:
        """Whether the caller's own duplicate has its vector: stored, and no embed job of its
        own still waiting (until then the vector could be another scope's)."""
        return self._has_vector(conn, content_hash, model) and not pg_jobs.waiting(
            conn, "embed", memory_id)

    def idempotent(self, key: KeySpace) -> Recorded | None:
        with self._conn() as conn:
            return _recorded(conn, key)

    # -- edit, forget, recover -----------------------------------------------------------------

    def update_memory(self, memory_id: str, edit: MemoryEdit) -> Edited | None:
        columns, now = edit.columns, edit.now
        values = {k: (dumps(list(v)) if k == "tags" and not isinstance(v, str) else v)
                  for k, v in columns.items()}
        if "pinned" in values:
            values["pinned"] = bool(values["pinned"])
        sets = ", ".join(f"{c} = %s::jsonb" if c == "tags" else f"{c} = %s" for c in values)
        with self._conn() as conn, conn.transaction():
            current = self._visible(conn, memory_id, edit.scope)
            if current is None:
                return None
            memory_id = current.id
            check_edit(current, edit, lambda *where: self._live_by_hash(conn, *where))
            try:
                with conn.transaction():  # a savepoint: a racing writer's row is a Conflict
                    conn.execute(
                        f"UPDATE memories SET {sets}, updated_at = %s, version = version + 1,"
                        " update_count = update_count + 1 WHERE id = %s",
                        [*values.values(), now, memory_id],
                    )
            except psycopg.errors.UniqueViolation as exc:
                raise Conflict(f"another memory already holds this content ({memory_id})") from exc
            self._record(conn, memory_id, "updated", edit.actor, now, old_content=current.content,
                         new_content=columns.get("content", current.content), reason=edit.reason,
                         metadata=edit.history_metadata())
            if "content_hash" in columns:
                self._vector_or_job(conn, columns["content_hash"], edit.vector, edit.model,
                                    memory_id, now, edit.max_attempts, fresh=True)
            if "content" in columns:  # new text names other things (store/memory_ops.py)
                graph = PostgresGraphOps(conn)
                graph.unlink_memory(memory_id)
                graph.link_known_entities(memory_id, current.agent_id, columns["content"], now)
                conn.execute("UPDATE memories SET hints = '' WHERE id = %s", (memory_id,))
                for job_type in edit.jobs:
                    pg_jobs.enqueue(conn, job_type, memory_id=memory_id, now=now,
                                    max_attempts=edit.max_attempts)
                    if job_type == "extract":
                        conn.execute("UPDATE memories SET extraction_status = 'pending'"
                                     " WHERE id = %s", (memory_id,))
            updated = self._get(conn, memory_id, None)
        if edit.vector is not None:
            self._ensure_index(int(np.asarray(edit.vector).shape[-1]))
        assert updated is not None
        return Edited(updated)

    def forget(
        self, memory_id: str, *, actor: Actor, now: str, reason: str | None = None,
        scope: MemoryScope | None = None, check: Check | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Memory | None:
        with self._conn() as conn, conn.transaction():
            current = self._visible(conn, memory_id, scope)
            if current is None or current.is_deleted:
                return current
            if check is not None:
                check(current)
            soft_delete(conn, current.id, now, POSTGRES)
            self._record(conn, current.id, "deleted", actor, now, old_content=current.content,
                         reason=reason, metadata=metadata)
            return self._get(conn, current.id, None)

    def recover(
        self, memory_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None,
        reason: str | None = None, check: Check | None = None,
    ) -> Memory | None:
        with self._conn() as conn, conn.transaction():
            current = self._visible(conn, memory_id, scope)
            if current is None or not needs_recovery(
                    current, check, lambda *where: self._live_by_hash(conn, *where)):
                return current
            try:
                with conn.transaction():
                    recover_row(conn, current.id, now, POSTGRES)
            except psycopg.errors.UniqueViolation as exc:  # the same content live meanwhile
                raise Conflict(f"another memory already holds this content ({current.id})") from exc
            self._record(conn, current.id, "recovered", actor, now, new_content=current.content,
                         reason=reason)
            return self._get(conn, current.id, None)

    def _visible(
        self, conn: psycopg.Connection, memory_id: str, scope: MemoryScope | None
    ) -> Memory | None:
        """The memory (a short id resolved, in scope), locked for the transaction."""
        memory_id = self._resolve(conn, "memories", memory_id, "memory", scope)
        return self._get(conn, memory_id, scope, lock=True)

    # -- feedback, accesses, batch matching, vectors -------------------------------------------

    @contextmanager
    def _feedback_tx(self) -> Iterator[psycopg.Connection]:
        with self._conn() as conn, conn.transaction():
            yield conn

    def _graph_ops(self, conn: psycopg.Connection) -> PostgresGraphOps:
        return PostgresGraphOps(conn)

    def feedback_for(self, memory_id: str) -> list[Feedback]:
        with self._conn() as conn:
            return feedback_sql.for_memory(conn, memory_id, POSTGRES)

    def add_accesses(self, rows: Sequence[tuple[str, int, str]]) -> None:
        if not rows:
            return
        ids, counts, lasts = zip(*rows, strict=True)
        with self._conn() as conn:
            # One statement, increments in the database: two daemons' flushes add up.
            conn.execute(
                "UPDATE memories m SET access_count = m.access_count + a.n,"
                " last_accessed = GREATEST(COALESCE(m.last_accessed, ''), a.last)"
                " FROM unnest(%s::text[], %s::int[], %s::text[]) AS a(id, n, last)"
                " WHERE m.id = a.id",
                (list(ids), list(counts), list(lasts)),
            )

    def match_all(self, text: str, filters: MemoryFilters, limit: int) -> list[str]:
        with self._conn() as conn:
            return lexical.match_all(conn, text, filters, limit)

    def mark_stale_except(self, model: str, dimensions: int) -> int:
        with self._conn() as conn:
            cursor = conn.execute(
                "UPDATE embeddings SET stale = true WHERE NOT stale"
                " AND (model != %s OR dimensions != %s)", (model, dimensions),
            )
            return cursor.rowcount

    # -- skills -------------------------------------------------------------------------------

    def skill_metas(self, agent_id: str) -> list[SkillMeta]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {_SKILL} FROM skill_meta WHERE agent_id = %s"
                " ORDER BY skill_name COLLATE \"C\"", (agent_id,),
            ).fetchall()
        return [SkillMeta(*r) for r in rows]

    def skill_memory(self, name: str, agent_id: str) -> SkillMemory | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT id, content, importance, version FROM memories WHERE source_type = %s"
                " AND source_id = %s AND agent_id = %s AND NOT is_deleted"
                " ORDER BY created_at, seq LIMIT 1",
                (SOURCE_TYPE, source_id(name), agent_id),
            ).fetchone()
        return SkillMemory(str(row[0]), str(row[1]), float(row[2]), int(row[3])) if row else None

    def upsert_skill_meta(
        self, *, name: str, agent_id: str, path: str, role: str | None, decay_rate: float,
        now: str,
    ) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO skill_meta (id, skill_name, agent_id, decay_rate,"
                " role_classification, filesystem_path, created_at, updated_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (skill_name, agent_id)"
                " DO UPDATE SET role_classification = excluded.role_classification,"
                " filesystem_path = excluded.filesystem_path, decay_rate = excluded.decay_rate,"
                " updated_at = excluded.updated_at WHERE skill_meta.role_classification IS"
                " DISTINCT FROM excluded.role_classification OR skill_meta.filesystem_path IS"
                " DISTINCT FROM excluded.filesystem_path"
                " OR skill_meta.decay_rate != excluded.decay_rate",
                ("skm_" + new_id()[:16], name, agent_id, decay_rate, role, path, now, now),
            )

    def delete_skill_meta(self, name: str, agent_id: str) -> bool:
        with self._conn() as conn:
            return skills_sql.delete_meta(conn, name, agent_id, POSTGRES)

    def set_importances(self, moves: Sequence[tuple[str, float]]) -> None:
        if not moves:
            return
        ids, values = zip(*moves, strict=True)
        with self._conn() as conn:
            conn.execute(
                "UPDATE memories m SET importance = v.importance"
                " FROM unnest(%s::text[], %s::float8[]) AS v(id, importance) WHERE m.id = v.id",
                (list(ids), list(values)),
            )


def _recorded(conn: psycopg.Connection, key: KeySpace, *, lock: bool = False) -> Recorded | None:
    if lock:
        # Two daemons answering the same retry: the second waits for the first's answer.
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                     (dumps([key.key, key.agent, key.project]),))
    row = conn.execute(
        f"SELECT content_hash, response FROM idempotency_scoped_keys WHERE {_KEY_WHERE}",
        (key.key, key.agent, key.project),
    ).fetchone()
    return Recorded(str(row[0]), str(row[1])) if row else None
