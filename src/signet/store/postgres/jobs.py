"""The job queue on PostgreSQL: store/jobs.py's lifecycle, safe across several daemons.

Same states and rules as the SQLite queue (pending -> leased -> completed, or back to pending
until the last attempt, then dead). What SQLite's single writer guaranteed is explicit here:
- lease: `SELECT ... FOR UPDATE SKIP LOCKED` picks the oldest claimable row that no other
  transaction holds, and the UPDATE claims it in the same statement, so two daemons' workers
  never claim one job and never wait on each other;
- enqueue: a unique partial index over (type, target) among live jobs plus
  `ON CONFLICT DO NOTHING` drops a duplicate even when two daemons enqueue at the same moment.
Timestamps are text in `format_ts` form, compared as text as on SQLite.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from signet.errors import InvalidInput
from signet.store.jobs import (
    DEFAULT_MAX_ATTEMPTS,
    MAX_ERROR_CHARS,
    Job,
    _check_type,
    _job,
    _shift,
    _ts,
)
from signet.types import JOB_STATUSES, dumps

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
    params: dict[str, Any] = {"now": _ts(now)}
    type_clause = ""
    if job_types is not None:
        if not job_types:
            return None
        for job_type in job_types:
            _check_type(job_type)
        params["types"] = list(job_types)
        type_clause = " AND job_type = ANY(%(types)s)"
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            "UPDATE memory_jobs SET status = 'leased', attempts = attempts + 1,"
            " leased_at = %(now)s, updated_at = %(now)s"
            " WHERE id = (SELECT id FROM memory_jobs WHERE status = 'pending'"
            " AND attempts < max_attempts AND (run_after IS NULL OR run_after <= %(now)s)"
            f"{type_clause} ORDER BY created_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED)"
            f" RETURNING {_COLUMNS}",
            params,
        ).fetchone()
    return _job(row) if row else None  # type: ignore[arg-type]


def complete(
    conn: psycopg.Connection, job_id: str, now: str, result: dict[str, Any] | None = None
) -> bool:
    now = _ts(now)
    cursor = conn.execute(
        "UPDATE memory_jobs SET status = 'completed', completed_at = %s, updated_at = %s,"
        " result = %s, run_after = NULL WHERE id = %s AND status = 'leased'",
        (now, now, dumps(result) if result is not None else None, job_id),
    )
    return cursor.rowcount == 1


def fail(
    conn: psycopg.Connection, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0
) -> str:
    now = _ts(now)
    run_after = _shift(now, retry_delay_ms) if retry_delay_ms > 0 else None
    row = conn.execute(
        "UPDATE memory_jobs SET"
        " status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'dead' END,"
        " run_after = CASE WHEN attempts < max_attempts THEN %s ELSE NULL END,"
        " leased_at = NULL, failed_at = %s, error = %s, updated_at = %s"
        " WHERE id = %s AND status = 'leased' RETURNING status",
        (run_after, now, error[:MAX_ERROR_CHARS], now, job_id),
    ).fetchone()
    return str(row[0]) if row else ""


def reap_stale_leases(conn: psycopg.Connection, now: str, lease_timeout_ms: int) -> int:
    now = _ts(now)
    cursor = conn.execute(
        "UPDATE memory_jobs SET"
        " status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'dead' END,"
        " failed_at = CASE WHEN attempts < max_attempts THEN failed_at ELSE %s END,"
        " leased_at = NULL, error = 'lease expired', updated_at = %s"
        " WHERE status = 'leased' AND leased_at < %s",
        (now, now, _shift(now, -lease_timeout_ms)),
    )
    return cursor.rowcount


def waiting(conn: psycopg.Connection, job_type: str, memory_id: str) -> bool:
    """Whether a job of this type for this memory is pending or leased."""
    row = conn.execute(
        "SELECT 1 FROM memory_jobs WHERE job_type = %s AND memory_id = %s"
        " AND status IN ('pending', 'leased') LIMIT 1", (job_type, memory_id),
    ).fetchone()
    return row is not None


def get(conn: psycopg.Connection, job_id: str) -> Job | None:
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(f"SELECT {_COLUMNS} FROM memory_jobs WHERE id = %s", (job_id,)).fetchone()
    return _job(row) if row else None  # type: ignore[arg-type]


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


def list_jobs(
    conn: psycopg.Connection, *, status: str | None = None, job_type: str | None = None,
    limit: int = 50, offset: int = 0,
) -> list[Job]:
    """Jobs newest first, optionally of one status and/or type (store/jobs.py list_jobs)."""
    clauses, params = ["true"], []
    if status is not None:
        if status not in JOB_STATUSES:
            raise InvalidInput(f"unknown job status {status!r}")
        clauses.append("status = %s")
        params.append(status)
    if job_type is not None:
        _check_type(job_type)
        clauses.append("job_type = %s")
        params.append(job_type)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"SELECT {_COLUMNS} FROM memory_jobs WHERE {' AND '.join(clauses)}"
            " ORDER BY created_at DESC, seq DESC LIMIT %s OFFSET %s",
            (*params, max(limit, 0), max(offset, 0)),
        ).fetchall()
    return [_job(r) for r in rows]  # type: ignore[arg-type]


def ids_with_prefix(conn: psycopg.Connection, prefix: str, limit: int) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM memory_jobs WHERE starts_with(id, %s) ORDER BY id COLLATE \"C\" LIMIT %s",
        (prefix, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]


def depths(conn: psycopg.Connection) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for job_type, status, n in conn.execute(
        "SELECT job_type, status, count(*) FROM memory_jobs GROUP BY job_type, status"
    ).fetchall():
        out.setdefault(str(job_type), {})[str(status)] = int(n)
    return out


def last_errors(conn: psycopg.Connection, limit: int = 10) -> list[Job]:
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            f"SELECT {_COLUMNS} FROM memory_jobs WHERE error IS NOT NULL AND status != 'completed'"
            " ORDER BY updated_at DESC, seq DESC LIMIT %s", (max(limit, 0),),
        ).fetchall()
    return [_job(r) for r in rows]  # type: ignore[arg-type]


def requeue_dead(
    conn: psycopg.Connection, now: str, *, job_ids: Sequence[str] | None = None
) -> int:
    """Dead jobs (all, or these ids) back to pending with a fresh set of attempts; the last
    error stays on the row."""
    if job_ids is not None and not job_ids:
        return 0
    cursor = conn.execute(
        "UPDATE memory_jobs SET status = 'pending', attempts = 0, failed_at = NULL,"
        " leased_at = NULL, run_after = NULL, updated_at = %s"
        " WHERE status = 'dead' AND (%s::text[] IS NULL OR id = ANY(%s::text[]))",
        (_ts(now), None if job_ids is None else list(job_ids),
         None if job_ids is None else list(job_ids)),
    )
    return cursor.rowcount


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


def purge(
    conn: psycopg.Connection, now: str, *, completed_before: str, dead_before: str, limit: int
) -> tuple[int, int]:
    """Retention steps 5 and 6 (store/jobs.py purge): old completed and dead jobs, at most
    `limit` of each, oldest first."""
    now, completed_before, dead_before = _ts(now), _ts(completed_before), _ts(dead_before)
    if completed_before > now or dead_before > now:
        raise InvalidInput("purge cutoffs must not be later than now")
    out = []
    for status, column, before in (("completed", "completed_at", completed_before),
                                   ("dead", "failed_at", dead_before)):
        cursor = conn.execute(
            f"DELETE FROM memory_jobs WHERE id IN (SELECT id FROM memory_jobs WHERE status = %s"
            f" AND {column} < %s ORDER BY {column} LIMIT %s)", (status, before, max(limit, 0)),
        )
        out.append(cursor.rowcount)
    return out[0], out[1]


def count_older(conn: psycopg.Connection, status: str, before: str, limit: int) -> int:
    column = "completed_at" if status == "completed" else "failed_at"
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memory_jobs WHERE status = %s AND {column} < %s"
        " LIMIT %s) AS t", (status, before, max(limit, 0)),
    ).fetchone()
    return int(row[0]) if row else 0
