"""The job queue on PostgreSQL: store/jobs.py's lifecycle, safe across several daemons. The lease
selects the oldest claimable row `FOR UPDATE SKIP LOCKED` and claims it in the same statement, so
daemons never claim one job nor wait on each other; a unique partial index over (type, target)
among live jobs drops a duplicate even when two daemons enqueue at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

import psycopg
from psycopg.rows import dict_row

from signet.errors import InvalidInput
from signet.store import jobs
from signet.store.dialect import POSTGRES
from signet.store.jobs import DEFAULT_MAX_ATTEMPTS, Job, _check_type, _ts
from signet.types import dumps

# The statements both queues share (store/jobs.py), in this dialect.
complete = partial(jobs.complete, dialect=POSTGRES)
fail = partial(jobs.fail, dialect=POSTGRES)
reap_stale_leases = partial(jobs.reap_stale_leases, dialect=POSTGRES)
waiting = partial(jobs.waiting, dialect=POSTGRES)
requeue_dead = partial(jobs.requeue_dead, dialect=POSTGRES)
purge = partial(jobs.purge, dialect=POSTGRES)
depths = jobs.depths

_COLUMNS = (
    "id, memory_id, job_type, status, payload, result, attempts, max_attempts, leased_at,"
    " completed_at, failed_at, error, document_id, created_at, updated_at, run_after"
)


def enqueue(
    conn: psycopg.Connection, job_type: str, *, now: str, memory_id: str | None = None,
    document_id: str | None = None, payload: dict[str, Any] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> str | None:
    _check_type(job_type)
    if max_attempts < 1:
        raise InvalidInput(f"max_attempts must be at least 1, got {max_attempts}")
    now, job_id = _ts(now), uuid.uuid4().hex
    cursor = conn.execute(
        "INSERT INTO memory_jobs (id, memory_id, job_type, status, payload, attempts,"
        " max_attempts, document_id, created_at, updated_at)"
        " VALUES (%s, %s, %s, 'pending', %s, 0, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (job_id, memory_id, job_type, dumps(payload) if payload is not None else None,
         max_attempts, document_id, now, now),
    )
    return job_id if cursor.rowcount == 1 else None


def lease(
    conn: psycopg.Connection, now: str, *, job_types: Sequence[str] | None = None
) -> Job | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return jobs.lease(cur, now, job_types=job_types, dialect=POSTGRES)


def summary(conn: psycopg.Connection, job_type: str) -> dict[str, int]:
    """Jobs of `job_type` per status, and how many were leased more than once (a retry, or a
    lease the reaper took back): what `bench load --daemons` checks for "each job once"."""
    rows = conn.execute(
        "SELECT status, count(*), count(*) FILTER (WHERE attempts > 1) FROM memory_jobs"
        " WHERE job_type = %s GROUP BY status", (job_type,),
    ).fetchall()
    out = {str(status): int(n) for status, n, _ in rows}
    out["leased_more_than_once"] = sum(int(again) for _, _, again in rows)
    return out


def release(conn: psycopg.Connection, job_id: str, now: str) -> None:
    """Hand a leased job back with its attempt (store/jobs.py release_leases for one job): a
    rate-limited provider is not the job's fault."""
    now = _ts(now)
    conn.execute(
        "UPDATE memory_jobs SET status = 'pending', attempts = greatest(attempts - 1, 0),"
        " leased_at = NULL, updated_at = %s WHERE id = %s AND status = 'leased'",
        (now, job_id),
    )


# --- the operator's side (store/operations.py JobAdmin): list, count, requeue, release -------


def ids_with_prefix(conn: psycopg.Connection, prefix: str, limit: int) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM memory_jobs WHERE starts_with(id, %s) ORDER BY id COLLATE \"C\" LIMIT %s",
        (prefix, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]


def release_leases(
    conn: psycopg.Connection, now: str, held: Sequence[tuple[str, str]] | None = None
) -> int:
    """Leased jobs back to pending, their attempt given back: all (None), or each given
    (id, leased_at) only while it is still that lease (the reaper may have handed the job to
    another daemon since; that daemon's lease is not this caller's to release)."""
    if held is not None and not held:
        return 0
    ids = None if held is None else [job_id for job_id, _ in held]
    stamps = None if held is None else [leased_at for _, leased_at in held]
    cursor = conn.execute(
        "UPDATE memory_jobs j SET status = 'pending', attempts = greatest(j.attempts - 1, 0),"
        " leased_at = NULL, updated_at = %s WHERE j.status = 'leased' AND (%s::text[] IS NULL"
        " OR (j.id, j.leased_at) IN (SELECT * FROM unnest(%s::text[], %s::text[])))",
        (_ts(now), ids, ids, stamps),
    )
    return cursor.rowcount


def count_older(conn: psycopg.Connection, status: str, before: str, limit: int) -> int:
    column = "completed_at" if status == "completed" else "failed_at"
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memory_jobs WHERE status = %s AND {column} < %s"
        " LIMIT %s) AS t", (status, before, max(limit, 0)),
    ).fetchone()
    return int(row[0]) if row else 0


def get(conn: psycopg.Connection, job_id: str) -> Job | None:
    with conn.cursor(row_factory=dict_row) as cur:
        return jobs.get(cur, job_id, dialect=POSTGRES)


def list_jobs(
    conn: psycopg.Connection, *, status: str | None = None, job_type: str | None = None,
    limit: int = 50, offset: int = 0,
) -> list[Job]:
    with conn.cursor(row_factory=dict_row) as cur:
        return jobs.list_jobs(cur, status=status, job_type=job_type, limit=limit,
                              offset=offset, dialect=POSTGRES)


def last_errors(conn: psycopg.Connection, limit: int = 10) -> list[Job]:
    with conn.cursor(row_factory=dict_row) as cur:
        return jobs.last_errors(cur, limit, dialect=POSTGRES)
