"""PostgresDocuments: the DocumentStore contract (store/document_store.py) on PostgreSQL.

The same transactions as the SQLite side, on PostgresCore's pool (migration 005_documents.sql).
What SQLite's one writer gave for free is explicit here, because several daemons share the
tables:
- registration takes a transaction-scoped advisory lock on the source (agent, project, source
  key) before it looks the source up, so two daemons registering one file (a connector synced
  by both) find one document instead of inserting two;
- the `document_ingest` jobs are leased with `FOR UPDATE SKIP LOCKED` (store/postgres/jobs.py),
  and every step of the worker first locks its job row (`FOR UPDATE`) and checks the lease is
  still the caller's, so a reaper cannot hand the job to another daemon halfway through a step:
  each document is processed by one worker at a time, and a step of a lost lease rolls back;
- a chunk is written by the memory service's own write path (`write_prepared`: dedup per scope,
  history, the vector or an `embed` job for any daemon's embed worker, the pipeline's jobs),
  inside the chunk set's transaction (`PostgresCore.transaction`, which its insert joins).

Recall ranks a document's chunks as one source, as on SQLite: `memory_sources` (migration
008, kept by a trigger in the writing transaction) holds each source's joined text, ranked by
BM25 over whole sources (store/postgres/lexical.py `search_sources`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from signet.store import documents as doc_sql
from signet.store.dialect import POSTGRES
from signet.store.document_store import INGEST, PreparedChunk, link_plan
from signet.store.documents import (
    _COLUMNS,
    _CONNECTOR_COLUMNS,
    STATUSES,
    Connector,
    Document,
    NewDocument,
    _connector,
    _document,
)
from signet.store.jobs import Job, LostLease
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres.core import PostgresCore
from signet.types import Actor, MemoryScope, RememberResult, dumps

__all__ = ["PostgresDocuments"]

_SCOPE = "(%(agent)s::text IS NULL OR agent_id = %(agent)s) AND " \
    "(%(project)s::text IS NULL OR project = %(project)s)"
_FIELDS = frozenset({"error", "title", "content_hash", "content_type", "raw_content",
                     "chunk_count", "memory_count", "completed_at", "source_url", "metadata_json"})


def _scope(scope: MemoryScope | None) -> dict[str, Any]:
    scope = scope or MemoryScope()
    return {"agent": scope.agent_id, "project": scope.project}


class PostgresDocuments:
    backend = "postgres"

    def __init__(self, core: PostgresCore, write_chunk: Callable[[Any], RememberResult]) -> None:
        """`write_chunk`: the memory service's `write_prepared`; called inside the chunk set's
        `PostgresCore.transaction`, its insert joins that transaction (as a savepoint)."""
        self.core = core
        self.write_chunk = write_chunk

    # -- the service's transactions ------------------------------------------------------------
    def register(self, new: NewDocument, *, now: str, max_attempts: int) -> tuple[Document, str]:
        with self.core.transaction() as conn:
            # A local file is one source whoever registers it: locked, and found, by its path.
            path = new.source_url if new.source_type == "file" else None
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (dumps([new.agent_id, new.project, path or new.source_key]),),
            )
            known = self._one(conn, f"SELECT {_COLUMNS} FROM documents WHERE agent_id = %s"
                              " AND project IS NOT DISTINCT FROM %s AND (source_key = %s OR"
                              " (%s::text IS NOT NULL AND source_type = 'file' AND source_url = %s))"
                              " ORDER BY created_at, seq LIMIT 1",
                              (new.agent_id, new.project, new.source_key, path, path))
            if known is not None and new.connector_id and known.connector_id != new.connector_id:
                conn.execute("UPDATE documents SET connector_id = %s WHERE id = %s",
                             (new.connector_id, known.id))
                known = self._get(conn, known.id, None)
                assert known is not None
            if known is not None and new.unchanged(known):
                return known, "unchanged"
            if known is None:
                doc_id, outcome = uuid.uuid4().hex, "queued"
                conn.execute(
                    "INSERT INTO documents (id, source_url, source_type, title, raw_content,"
                    " status, metadata_json, created_at, updated_at, agent_id, project,"
                    " source_key, connector_id) VALUES (%s,%s,%s,%s,%s,'queued',%s,%s,%s,%s,%s,"
                    "%s,%s)",
                    (doc_id, new.source_url, new.source_type, new.title, new.raw_content,
                     dumps(new.metadata), now, now, new.agent_id, new.project, new.source_key,
                     new.connector_id),
                )
            else:
                doc_id, outcome = known.id, "requeued"
                # The new registration's source: never a path the stored row held.
                conn.execute(
                    "UPDATE documents SET status = 'queued', error = NULL, source_type = %s,"
                    " source_url = %s, raw_content = %s, metadata_json = %s,"
                    " title = coalesce(%s, title), updated_at = %s, completed_at = NULL"
                    " WHERE id = %s",
                    (new.source_type, new.source_url, new.raw_content, dumps(new.metadata),
                     new.title, now, doc_id),
                )
            pg_jobs.enqueue(conn, INGEST, now=now, document_id=doc_id, max_attempts=max_attempts)
            document = self._get(conn, doc_id, None)
        assert document is not None
        return document, outcome

    def get(self, doc_id: str, scope: MemoryScope | None = None) -> Document | None:
        with self.core._conn() as conn:
            return self._get(conn, doc_id, scope)

    def raw_content(self, doc_id: str) -> str | None:
        with self.core._conn() as conn:
            row = conn.execute("SELECT raw_content FROM documents WHERE id = %s",
                               (doc_id,)).fetchone()
        return row[0] if row else None

    def chunk_links(self, doc_id: str) -> list[tuple[str, int, str | None]]:
        with self.core._conn() as conn:
            return self._links(conn, doc_id)

    def list_page(
        self, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
        limit: int, offset: int,
    ) -> tuple[list[Document], int]:
        where = f"{_SCOPE} AND (%(status)s::text IS NULL OR status = %(status)s)" \
            " AND (%(connector)s::text IS NULL OR connector_id = %(connector)s)"
        params = {**_scope(scope), "status": status, "connector": connector_id}
        with self.core._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            total = cur.execute(f"SELECT count(*) AS n FROM documents WHERE {where}",
                                params).fetchone()
            rows = cur.execute(
                f"SELECT {_COLUMNS} FROM documents WHERE {where}"
                " ORDER BY created_at DESC, seq DESC LIMIT %(limit)s OFFSET %(offset)s",
                {**params, "limit": limit, "offset": offset},
            ).fetchall()
        return [_document(r) for r in rows], int(total["n"]) if total else 0  # type: ignore[arg-type]

    def delete(
        self, doc_id: str, *, actor: Actor, now: str, scope: MemoryScope | None = None
    ) -> int | None:
        with self.core.transaction() as conn:
            if self._get(conn, doc_id, scope, lock=True) is None:
                return None
            owned = [r[0] for r in conn.execute(
                "SELECT id FROM memories WHERE source_id = %s AND source_type = 'document'"
                " AND NOT is_deleted ORDER BY seq", (doc_id,))]
            forgotten = self._forget(conn, owned, actor, now, reason=f"document {doc_id} deleted")
            doc_sql.delete(conn, doc_id, POSTGRES)
        return forgotten

    # -- the worker's ------------------------------------------------------------------------
    def lease(self, now: str) -> Job | None:
        with self.core._conn() as conn:
            return pg_jobs.lease(conn, now, job_types=[INGEST])

    def step(self, job: Job, doc_id: str, status: str, now: str, **fields: Any) -> None:
        with self.core.transaction() as conn:
            _check_owned(conn, job)
            _set_status(conn, doc_id, status, now, **fields)

    def finish(self, job: Job, doc_id: str, now: str, result: dict[str, Any],
               **fields: Any) -> None:
        with self.core.transaction() as conn:
            _check_owned(conn, job)
            _set_status(conn, doc_id, "done", now, completed_at=now, error=None, **fields)
            pg_jobs.complete(conn, job.id, now, result)

    def fail(self, job: Job, doc_id: str, error: str, now: str, *, final: bool) -> None:
        with self.core.transaction() as conn:
            if not _owns(conn, job):
                return
            _set_status(conn, doc_id, "failed", now, error=error)
            if final:
                pg_jobs.complete(conn, job.id, now, {"error": error})

    def fail_job(self, job: Job, error: str, now: str, *, retry_delay_ms: int) -> str:
        with self.core.transaction() as conn:
            if not _owns(conn, job):
                return ""
            return pg_jobs.fail(conn, job.id, error, now, retry_delay_ms=retry_delay_ms)

    def skip(self, job: Job, now: str, result: dict[str, Any]) -> None:
        with self.core.transaction() as conn:
            _check_owned(conn, job)
            pg_jobs.complete(conn, job.id, now, result)

    def index(
        self, job: Job, document: Document, *, digest: str, hashes: Sequence[str],
        new: Mapping[int, PreparedChunk], held: Mapping[str, str], actor: Actor, now: str,
    ) -> dict[str, int]:
        with self.core.transaction() as conn:
            _check_owned(conn, job)

            def write(index: int) -> str | None:
                memory_id = self.write_chunk(new[index]).id
                memory = self.core._get(conn, memory_id, None)
                in_slice = memory is not None and memory.agent_id == document.agent_id \
                    and memory.project == document.project
                return memory_id if in_slice else None  # an equal memory of another slice

            links, stale = link_plan(hashes, held, write)
            for memory_id, index in links:
                doc_sql.link(conn, document.id, memory_id, index, POSTGRES)
            if stale:
                conn.execute("DELETE FROM document_memories WHERE document_id = %s"
                             " AND memory_id = ANY(%s)", (document.id, stale))
            owned = [r[0] for r in conn.execute(
                "SELECT id FROM memories WHERE id = ANY(%s) AND source_id = %s ORDER BY seq",
                (stale, document.id))]
            forgotten = self._forget(conn, owned, actor, now,
                                     reason=f"document {document.id} changed")
            result = {"chunks": len(hashes), "new": len(new), "kept": len(hashes) - len(new),
                      "forgotten": forgotten}
            _set_status(conn, document.id, "done", now, memory_count=len(dict(links)),
                        completed_at=now, error=None, content_hash=digest)
            pg_jobs.complete(conn, job.id, now, result)
        return result

    # -- connectors -------------------------------------------------------------------------
    def add_connector(
        self, *, provider: str, display_name: str | None, config: dict[str, Any],
        agent_id: str, project: str | None, now: str,
    ) -> str:
        connector_id = uuid.uuid4().hex
        with self.core._conn() as conn:
            conn.execute(
                "INSERT INTO connectors (id, provider, display_name, config_json, cursor_json,"
                " status, created_at, updated_at, agent_id, project)"
                " VALUES (%s,%s,%s,%s,'{}','idle',%s,%s,%s,%s)",
                (connector_id, provider, display_name, dumps(config), now, now, agent_id,
                 project),
            )
        return connector_id

    def get_connector(
        self, connector_id: str, scope: MemoryScope | None = None
    ) -> Connector | None:
        with self.core._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE id = %(id)s AND {_SCOPE}",
                {"id": connector_id, **_scope(scope)},
            ).fetchone()
        return _connector(row) if row else None  # type: ignore[arg-type]

    def list_connectors(self, scope: MemoryScope | None = None) -> list[Connector]:
        with self.core._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE {_SCOPE}"
                " ORDER BY created_at, id", _scope(scope),
            ).fetchall()
        return [_connector(r) for r in rows]  # type: ignore[arg-type]

    def set_connector_state(
        self, connector_id: str, *, status: str, now: str, last_error: str | None = None,
        cursor: dict[str, Any] | None = None, synced: bool = False,
    ) -> None:
        with self.core._conn() as conn:
            conn.execute(
                "UPDATE connectors SET status = %s, last_error = %s, updated_at = %s,"
                " cursor_json = coalesce(%s, cursor_json),"
                " last_sync_at = CASE WHEN %s THEN %s ELSE last_sync_at END WHERE id = %s",
                (status, last_error, now, dumps(cursor) if cursor is not None else None, synced,
                 now, connector_id),
            )

    def set_connector_config(self, connector_id: str, config: dict[str, Any], now: str) -> None:
        with self.core._conn() as conn:
            conn.execute("UPDATE connectors SET config_json = %s, updated_at = %s WHERE id = %s",
                         (dumps(config), now, connector_id))

    def delete_connector(self, connector_id: str) -> None:
        with self.core._conn() as conn:
            conn.execute("DELETE FROM connectors WHERE id = %s", (connector_id,))

    def document_counts(self, connector_id: str) -> dict[str, int]:
        with self.core._conn() as conn:
            rows = conn.execute(
                "SELECT status, count(*) FROM documents WHERE connector_id = %s GROUP BY status",
                (connector_id,),
            ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def connector_documents(self, connector_id: str) -> list[str]:
        with self.core._conn() as conn:
            rows = conn.execute("SELECT id FROM documents WHERE connector_id = %s ORDER BY seq",
                                (connector_id,)).fetchall()
        return [str(r[0]) for r in rows]

    # -- helpers ----------------------------------------------------------------------------
    def _get(self, conn: psycopg.Connection, doc_id: str, scope: MemoryScope | None, *,
             lock: bool = False) -> Document | None:
        return self._one(
            conn, f"SELECT {_COLUMNS} FROM documents WHERE id = %(id)s AND {_SCOPE}"
            + (" FOR UPDATE" if lock else ""), {"id": doc_id, **_scope(scope)},
        )

    def _one(self, conn: psycopg.Connection, sql: str, params: Any) -> Document | None:
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(sql, params).fetchone()
        return _document(row) if row else None  # type: ignore[arg-type]

    def _links(self, conn: psycopg.Connection, doc_id: str) -> list[tuple[str, int, str | None]]:
        return doc_sql.chunk_links(conn, doc_id, POSTGRES)

    def _forget(self, conn: psycopg.Connection, memory_ids: list[str], actor: Actor, now: str,
                *, reason: str) -> int:
        """Soft-delete chunk memories, each with its history row (PostgresCore.forget's writes)."""
        count = 0
        for memory_id in memory_ids:
            memory = self.core._get(conn, memory_id, None, lock=True)
            if memory is None or memory.is_deleted:
                continue
            conn.execute(
                "UPDATE memories SET is_deleted = true, deleted_at = %s, updated_at = %s,"
                " version = version + 1 WHERE id = %s", (now, now, memory_id),
            )
            self.core._record(conn, memory_id, "deleted", actor, now,
                              old_content=memory.content, reason=reason)
            count += 1
        return count


def _owns(conn: psycopg.Connection, job: Job) -> bool:
    """store/jobs.owns on this backend, with the job row locked until the transaction ends:
    the reaper cannot take the lease back while a step of it commits."""
    row = conn.execute(
        "SELECT status, attempts, leased_at FROM memory_jobs WHERE id = %s FOR UPDATE",
        (job.id,),
    ).fetchone()
    return row is not None and row[0] == "leased" and int(row[1]) == job.attempts \
        and row[2] == job.leased_at


def _check_owned(conn: psycopg.Connection, job: Job) -> None:
    if not _owns(conn, job):
        raise LostLease(f"document job {job.id} is no longer leased by this worker")


def _set_status(conn: psycopg.Connection, doc_id: str, status: str, now: str,
                **fields: Any) -> None:
    """store/documents.set_status on this backend."""
    assert status in STATUSES and set(fields) <= _FIELDS, fields
    sets = "".join(f", {name} = %({name})s" for name in fields)
    conn.execute(
        f"UPDATE documents SET status = %(status)s, updated_at = %(now)s{sets} WHERE id = %(id)s",
        {"status": status, "now": now, "id": doc_id, **fields},
    )
