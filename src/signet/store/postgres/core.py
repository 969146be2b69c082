"""PostgresCore: the CoreStore contract (store/backend.py) on PostgreSQL, psycopg 3 and a pool.
Every operation borrows a pooled connection and gives it back, with no in-process cache, so any
number of daemons share the database and each sees what the others committed. Insert-with-dedup
rests on the unique partial index over (hash, agent, project) among live rows; scope is a WHERE
clause of the statement reading the row.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from signet.errors import InvalidInput, StoreError
from signet.store import history
from signet.store.dialect import POSTGRES
from signet.store.embeddings import VectorItem, has_current
from signet.store.jobs import DEFAULT_MAX_ATTEMPTS, Job, memory_ids
from signet.store.memories import find_live_by_hash, row_to_memory, set_embedding_model
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres import lexical, migrate, vectors
from signet.store.postgres.columns import MEMORY_COLUMNS
from signet.store.postgres.filters import filter_sql, scope_sql
from signet.store.postgres.graph import PostgresGraph
from signet.store.postgres.memory import PostgresMemoryOps
from signet.store.postgres.recall_reads import PostgresRecallReads
from signet.store.signing_key import SECRET_BYTES
from signet.store.tokens import LOGIN_ROLE, TokenRow, _row
from signet.types import (
    Actor,
    HistoryEvent,
    Memory,
    MemoryFilters,
    MemoryScope,
    dumps,
    utc_now,
)

_SELECT = MEMORY_COLUMNS
_TOKEN_COLUMNS = (
    "id, name, role, permissions, scope_project, scope_agent, key_hash, created_at,"
    " expires_at, revoked_at, last_used_at"
)
SIGNING_KEY_NAME = "auth"
CONNECT_TIMEOUT_S = 10
RECENT_LEASES = 1024  # held_leases: far more than the jobs of one tick of every worker


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^:@/?#]*):[^@/?#]*@", r"\1:***@", re.sub(
        r"(password=)[^&\s]*", r"\1***", url, flags=re.IGNORECASE))


class StorePool(ConnectionPool):
    """The pool every PostgreSQL store module borrows from. A database gone away (server stopped,
    network cut, pool closed, every connection busy past the timeout) surfaces as StoreError,
    answered 503 `store_error`, never an unexplained 500; a NUL in a value is InvalidInput."""

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[psycopg.Connection]:
        try:
            with super().connection(timeout) as conn:
                yield conn
        except (psycopg.OperationalError, PoolClosed, PoolTimeout) as exc:
            raise StoreError(f"the PostgreSQL store is unavailable: {exc}") from exc
        except psycopg.DataError as exc:
            # A NUL in a value the request did not validate as text (an id in a URL path):
            # PostgreSQL text cannot hold one, so it names nothing stored here.
            if "NUL" not in str(exc):
                raise
            raise InvalidInput(
                "a value holds a NUL character (U+0000), which no text may contain") from exc


class PostgresCore(PostgresMemoryOps):
    backend = "postgres"

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool
        self._indexed: set[int] = set()
        self._local = threading.local()  # the connection of this thread's `transaction()`
        self._leases: OrderedDict[str, str] = OrderedDict()  # held_leases
        self._leases_lock = threading.Lock()

    @classmethod
    def open(cls, url: str, *, min_size: int = 1, max_size: int = 8) -> PostgresCore:
        """Connect, migrate under the advisory lock, and return the store; StoreError naming
        the server (never the password) and the cause when it cannot."""
        where = redact(url)
        try:
            # One plain connection first: its error says why (refused, unknown database, bad
            # password), where a pool that never fills only says that it timed out.
            with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                migrate.migrate(conn)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"cannot open the PostgreSQL store {where}: {exc}; a superuser must run"
                " CREATE EXTENSION vector in that database once (docs/deploy.md)"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store {where}: {exc}") from exc
        pool = StorePool(
            url, min_size=min_size, max_size=max_size, open=False, name="signet-store",
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
        )
        try:
            pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 3)
        except BaseException as exc:
            pool.close()
            raise StoreError(f"cannot open the PostgreSQL store {where}: {exc}") from exc
        return cls(pool)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        bound = getattr(self._local, "conn", None)
        if bound is not None:  # inside this thread's transaction(): join it
            yield bound
            return
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """One transaction bound to this thread: every operation of this store called inside
        it (the memory service's insert, say) runs on its connection, its own transaction
        nested as a savepoint, and commits or rolls back with it, as `Store.write_tx` nests on
        SQLite. The pipeline's write transaction is one (store/postgres/pipeline.py)."""
        bound = getattr(self._local, "conn", None)
        if bound is not None:
            with bound.transaction():
                yield bound
            return
        with self.pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    @contextmanager
    def reading(self) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    @property
    def in_transaction(self) -> bool:
        """Whether this thread is inside `transaction()`."""
        return getattr(self._local, "conn", None) is not None

    # -- memories and history (the memory service's transactions: postgres/memory.py) -----
    def get_memory(self, memory_id: str, scope: MemoryScope | None = None) -> Memory | None:
        with self._conn() as conn:
            return self._get(conn, memory_id, scope)

    def get_memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"SELECT {_SELECT} FROM memories m WHERE m.id = ANY(%s)", (list(ids),)
            ).fetchall()
        return {r["id"]: row_to_memory(r) for r in rows}  # type: ignore[arg-type]

    def list_memories(
        self, filters: MemoryFilters, *, limit: int, offset: int
    ) -> tuple[list[Memory], int]:
        where, params = filter_sql(filters)
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            total = cur.execute(f"SELECT count(*) AS n FROM memories m WHERE {where}", params)
            count = int(total.fetchone()["n"])  # type: ignore[index]
            rows = cur.execute(
                f"SELECT {_SELECT} FROM memories m WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT %s OFFSET %s",
                [*params, limit, offset],
            ).fetchall()
        return [row_to_memory(r) for r in rows], count  # type: ignore[arg-type]

    def history(self, memory_id: str) -> list[HistoryEvent]:
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            return history.for_memory(cur, memory_id, dialect=POSTGRES)

    def _get(
        self, conn: psycopg.Connection, memory_id: str, scope: MemoryScope | None,
        *, lock: bool = False,
    ) -> Memory | None:
        where, params = scope_sql(scope)
        with conn.cursor(row_factory=dict_row) as cur:
            row = cur.execute(
                f"SELECT {_SELECT} FROM memories m WHERE m.id = %s AND {where}"
                + (" FOR UPDATE" if lock else ""),
                [memory_id, *params],
            ).fetchone()
        return row_to_memory(row) if row else None  # type: ignore[arg-type]

    def _live_by_hash(
        self, conn: psycopg.Connection, content_hash: str, agent_id: str, project: str | None
    ) -> str | None:
        return find_live_by_hash(conn, content_hash, agent_id, project, POSTGRES)

    def _record(
        self, conn: psycopg.Connection, memory_id: str, event: str, actor: Actor, now: str,
        **fields: Any,
    ) -> None:
        history.record(conn, memory_id, event, actor, now, dialect=POSTGRES, **fields)

    # -- vectors ----------------------------------------------------------------------------
    def has_vector(self, content_hash: str, model: str) -> bool:
        with self._conn() as conn:
            return self._has_vector(conn, content_hash, model)

    def store_vectors(
        self, items: Sequence[VectorItem], *, model: str, now: str, done: Sequence[Job] = ()
    ) -> int:
        stored = 0
        dims: set[int] = set()
        with self._conn() as conn, conn.transaction():
            for content_hash, vector, memory_id in items:
                if not self._has_vector(conn, content_hash, model):
                    self._upsert_vector(conn, content_hash, vector, model, now, memory_id or "")
                    dims.add(int(np.asarray(vector).shape[-1]))
                    stored += 1
            set_embedding_model(conn, memory_ids(done), model, POSTGRES)
            for job in done:  # a job the reaper took back is not completed
                pg_jobs.complete(conn, job.id, now, {"model": model})
        for dimensions in dims:
            self._ensure_index(dimensions)
        return stored

    def missing_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT m.content_hash, min(m.content) FROM memories m"
                " WHERE NOT m.is_deleted AND m.content_hash IS NOT NULL AND NOT EXISTS"
                " (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash"
                " AND e.model = %s AND NOT e.stale)"
                " GROUP BY m.content_hash LIMIT %s",
                (model, limit),
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def _has_vector(self, conn: psycopg.Connection, content_hash: str, model: str) -> bool:
        return has_current(conn, content_hash, model, POSTGRES)

    def _upsert_vector(
        self, conn: psycopg.Connection, content_hash: str, vector: np.ndarray, model: str,
        now: str, source_id: str,
    ) -> None:
        # Delete-and-insert (a new id), as store/embeddings.upsert does.
        conn.execute("DELETE FROM embeddings WHERE content_hash = %s", (content_hash,))
        conn.execute(
            "INSERT INTO embeddings (content_hash, vector, dimensions, model, source_type,"
            " source_id, created_at) VALUES (%s, %s::vector, %s, %s, 'memory', %s, %s)",
            (content_hash, vectors.literal(vector), int(np.asarray(vector).shape[-1]), model,
             source_id, now),
        )

    def _ensure_index(self, dimensions: int) -> None:
        if dimensions in self._indexed or self.in_transaction:
            return  # inside a caller's transaction: the next write outside one builds it
        with self._conn() as conn:
            vectors.ensure_index(conn, dimensions)
        self._indexed.add(dimensions)

    # -- search -----------------------------------------------------------------------------
    def lexical_search(
        self, text: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        with self._conn() as conn:
            return lexical.search(conn, text, filters, limit)

    def vector_search(
        self, query: np.ndarray, *, model: str, filters: MemoryFilters, limit: int
    ) -> list[tuple[str, float]]:
        with self._conn() as conn:
            return vectors.search(conn, query, model=model, filters=filters, limit=limit)

    # -- jobs -------------------------------------------------------------------------------
    def enqueue(
        self, job_type: str, *, now: str, memory_id: str | None = None,
        document_id: str | None = None, payload: dict[str, Any] | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> str | None:
        with self._conn() as conn:
            return pg_jobs.enqueue(conn, job_type, now=now, memory_id=memory_id,
                                   document_id=document_id, payload=payload,
                                   max_attempts=max_attempts)

    def lease(self, now: str, *, job_types: Sequence[str] | None = None) -> Job | None:
        with self._conn() as conn:
            job = pg_jobs.lease(conn, now, job_types=job_types)
        if job is not None:
            with self._leases_lock:
                self._leases[job.id] = job.leased_at or now
                while len(self._leases) > RECENT_LEASES:
                    self._leases.popitem(last=False)
        return job

    def lease_many(self, now: str, job_type: str, limit: int) -> list[Job]:
        leased: list[Job] = []
        while len(leased) < limit and (job := self.lease(now, job_types=[job_type])):
            leased.append(job)
        return leased

    def fail_leased(self, failures: Sequence[tuple[Job, int]], error: str, now: str) -> None:
        for job, delay in failures:
            self.fail(job.id, error, now, retry_delay_ms=delay)

    def held_leases(self) -> list[tuple[str, str]]:
        """(job id, leased_at) of the latest jobs this process leased. At a clean shutdown the app
        hands back those still at that very lease (`SignetApp.release_worker_leases`): an
        interrupted job did not fail, and other daemons' jobs on the shared queue are never
        touched. Ended jobs match nothing, so the bounded list needs no upkeep."""
        with self._leases_lock:
            return list(self._leases.items())

    def complete(self, job_id: str, now: str, result: dict[str, Any] | None = None) -> bool:
        with self._conn() as conn:
            return pg_jobs.complete(conn, job_id, now, result)

    def fail(self, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0) -> str:
        with self._conn() as conn:
            return pg_jobs.fail(conn, job_id, error, now, retry_delay_ms=retry_delay_ms)

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int:
        with self._conn() as conn:
            return pg_jobs.reap_stale_leases(conn, now, lease_timeout_ms)

    def get_job(self, job_id: str) -> Job | None:
        with self._conn() as conn:
            return pg_jobs.get(conn, job_id)

    def job_summary(self, job_type: str) -> dict[str, int]:
        """Jobs of a type per status, and those leased more than once (benchmarks)."""
        with self._conn() as conn:
            return pg_jobs.summary(conn, job_type)

    # -- tokens -----------------------------------------------------------------------------
    def insert_token(self, row: TokenRow) -> None:
        with self._conn() as conn:
            self._insert_token(conn, row)

    def _insert_token(self, conn: psycopg.Connection, row: TokenRow) -> None:
        conn.execute(
            f"INSERT INTO tokens ({_TOKEN_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (row.id, row.name, row.role, dumps(list(row.permissions)), row.scope_project,
             row.scope_agent, row.key_hash, row.created_at, row.expires_at, row.revoked_at,
             row.last_used_at),
        )

    def get_token(self, token_id: str) -> TokenRow | None:
        with self._conn() as conn:
            found = conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE id = %s", (token_id,)
            ).fetchone()
        return _row(found) if found else None

    def revoke_token(self, token_id: str, now: str) -> bool:
        with self._conn() as conn:
            cursor = conn.execute(
                "UPDATE tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL"
                " AND role != 'login'",
                (now, token_id),
            )
            return cursor.rowcount > 0

    def touch_token(self, token_id: str, now: str) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE tokens SET last_used_at = %s WHERE id = %s", (now, token_id))

    def list_tokens(self, *, include_revoked: bool = True) -> list[TokenRow]:
        where = "role != %s" + ("" if include_revoked else " AND revoked_at IS NULL")
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE {where} ORDER BY created_at, id",
                (LOGIN_ROLE,),
            ).fetchall()
        return [_row(r) for r in rows]

    def add_login_code(self, row: TokenRow, now: str) -> None:
        with self._conn() as conn, conn.transaction():
            conn.execute(
                "DELETE FROM tokens WHERE role = %s AND (revoked_at IS NOT NULL OR expires_at <= %s)",
                (LOGIN_ROLE, now),
            )
            self._insert_token(conn, row)

    def consume_login_code(self, key_hash: str, now: str) -> TokenRow | None:
        # One statement: two daemons exchanging the same code cannot both win.
        with self._conn() as conn:
            found = conn.execute(
                "UPDATE tokens SET revoked_at = %s, last_used_at = %s WHERE key_hash = %s"
                " AND role = %s AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > %s)"
                f" RETURNING {_TOKEN_COLUMNS}",
                (now, now, key_hash, LOGIN_ROLE, now),
            ).fetchone()
        if found is None:
            return None
        # The row as it was before this call consumed it (as the SQLite side returns it).
        return replace(_row(found), revoked_at=None, last_used_at=None)

    def signing_key(self) -> bytes:
        """The shared key: the first caller's random bytes win (ON CONFLICT DO NOTHING), every
        later caller, in any daemon, reads those."""
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO signing_keys (name, secret, created_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (name) DO NOTHING",
                (SIGNING_KEY_NAME, secrets.token_bytes(SECRET_BYTES), utc_now()),
            )
            row = conn.execute(
                "SELECT secret FROM signing_keys WHERE name = %s", (SIGNING_KEY_NAME,)
            ).fetchone()
        assert row is not None
        return bytes(row[0])

    def graph(self) -> PostgresGraph:
        return PostgresGraph(self._conn)

    def recall_reads(self, model: str | None) -> PostgresRecallReads:
        return PostgresRecallReads(self.pool, model)

    def size_bytes(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self.pool.close()
