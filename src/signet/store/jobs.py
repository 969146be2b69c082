"""The durable job queue: a job is a row in memory_jobs with a status and a lease.

`pending -> leased -> completed`, or back to `pending` on failure until the last attempt, then
`dead`. The lease is one `UPDATE ... RETURNING` in the write transaction, so two workers never
claim one job. A second live job of one type for one target is dropped. Shared with PostgreSQL
through a dialect (store/postgres/jobs.py).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from signet.errors import InvalidInput
from signet.store.connection import Connection, Row
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import JOB_STATUSES, JOB_TYPES, dumps, format_ts, parse_ts

JobStatus = Literal["pending", "leased", "completed", "failed", "dead"]

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_LEASE_TIMEOUT_MS = 300_000
MAX_ERROR_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    memory_id: str | None
    job_type: str
    status: str
    payload: dict[str, Any]
    result: dict[str, Any] | None
    attempts: int
    max_attempts: int
    leased_at: str | None
    completed_at: str | None
    failed_at: str | None
    error: str | None
    document_id: str | None
    created_at: str
    updated_at: str
    run_after: str | None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def memory_ids(jobs: Sequence[Job]) -> list[str]:
    """The memories these jobs are about (a document's job has none)."""
    return [job.memory_id for job in jobs if job.memory_id]


def _job(row: Row) -> Job:
    return Job(
        id=row["id"], memory_id=row["memory_id"], job_type=row["job_type"],
        status=row["status"], payload=_load(row["payload"]) or {},
        result=_load(row["result"]), attempts=int(row["attempts"]),
        max_attempts=int(row["max_attempts"]), leased_at=row["leased_at"],
        completed_at=row["completed_at"], failed_at=row["failed_at"], error=row["error"],
        document_id=row["document_id"], created_at=row["created_at"],
        updated_at=row["updated_at"], run_after=row["run_after"],
    )


def _load(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    value = json.loads(text)
    # A payload written as a bare value by hand still reaches the worker, wrapped.
    return value if isinstance(value, dict) else {"value": value}


def _ts(moment: str) -> str:
    try:
        return format_ts(parse_ts(moment))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"not an ISO-8601 timestamp: {moment!r}") from exc


def _shift(moment: str, ms: int) -> str:
    return format_ts(parse_ts(moment) + timedelta(milliseconds=ms))


def _check_type(job_type: str) -> None:
    if job_type not in JOB_TYPES:
        raise InvalidInput(f"unknown job type {job_type!r}; expected one of {', '.join(JOB_TYPES)}")


# --- the queue's transitions --------------------------------------------------------------------


def enqueue(
    conn: Connection,
    job_type: str,
    *,
    memory_id: str | None = None,
    document_id: str | None = None,
    payload: dict[str, Any] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    now: str,
) -> str | None:
    """Insert a pending job; return its id, or None when a live duplicate already exists.

    The target is `memory_id` when given, else `document_id`; a job with neither (a summary
    run, say) is never a duplicate.
    """
    _check_type(job_type)
    if max_attempts < 1:
        raise InvalidInput(f"max_attempts must be at least 1, got {max_attempts}")
    now, job_id = _ts(now), uuid.uuid4().hex
    # The duplicate check and the insert are one statement, so they cannot interleave with
    # another writer even if a caller forgets the write transaction.
    target_column, target = ("memory_id", memory_id) if memory_id else ("document_id", document_id)
    duplicate = (
        f"SELECT 1 FROM memory_jobs WHERE job_type = ? AND {target_column} = ?"
        " AND status IN ('pending', 'leased')"
    )
    cursor = conn.execute(
        "INSERT INTO memory_jobs (id, memory_id, job_type, status, payload, attempts,"
        " max_attempts, document_id, created_at, updated_at)"
        f" SELECT ?, ?, ?, 'pending', ?, 0, ?, ?, ?, ? WHERE NOT EXISTS ({duplicate})",
        (
            job_id, memory_id, job_type, dumps(payload) if payload is not None else None,
            max_attempts, document_id, now, now, job_type, target,
        ),
    )
    return job_id if cursor.rowcount == 1 else None


def waiting(
    conn: Executes, job_type: str, memory_id: str, *, dialect: Dialect = SQLITE
) -> bool:
    """Whether a job of this type for this memory is pending or leased."""
    row = conn.execute(dialect.sql(
        "SELECT 1 FROM memory_jobs WHERE job_type = ? AND memory_id = ?"
        " AND status IN ('pending', 'leased') LIMIT 1"), (job_type, memory_id),
    ).fetchone()
    return row is not None


def _claimable_where(
    now: str, job_types: Sequence[str] | None, dialect: Dialect
) -> tuple[str, list[Any]] | None:
    """The WHERE clause (and its parameters) of the jobs a lease may claim now; None when
    `job_types` is empty (nothing may be claimed)."""
    q = dialect.mark
    where = (f"status = 'pending' AND attempts < max_attempts"
             f" AND (run_after IS NULL OR run_after <= {q})")
    params: list[Any] = [now]
    if job_types is not None:
        if not job_types:
            return None
        for job_type in job_types:
            _check_type(job_type)
        among, type_params = dialect.one_of("job_type", job_types)
        where += f" AND {among}"
        params += type_params
    return where, params


def claimable(
    conn: Executes, now: str, *, job_types: Sequence[str] | None = None,
    dialect: Dialect = SQLITE,
) -> bool:
    """Whether a lease now would claim a job: a read, so an idle worker can skip the write
    transaction (on SQLite the one writer's turn) that a lease costs. A job enqueued after
    this read is found at the next tick."""
    clause = _claimable_where(_ts(now), job_types, dialect)
    if clause is None:
        return False
    where, params = clause
    row = conn.execute(f"SELECT 1 FROM memory_jobs WHERE {where} LIMIT 1", params).fetchone()
    return row is not None


def lease(
    conn: Executes, now: str, *, job_types: Sequence[str] | None = None,
    dialect: Dialect = SQLITE,
) -> Job | None:
    """Claim the oldest claimable pending job (call inside write_tx); None when there is none.
    On PostgreSQL the pick skips rows another transaction holds (`dialect.claim`), so two
    daemons never claim one job and never wait on each other."""
    now, q = _ts(now), dialect.mark
    clause = _claimable_where(now, job_types, dialect)
    if clause is None:
        return None
    where, params = clause
    # The insertion order breaks ties between jobs created in the same millisecond.
    rows = conn.execute(
        "UPDATE memory_jobs SET status = 'leased', attempts = attempts + 1,"
        f" leased_at = {q}, updated_at = {q}"
        f" WHERE id = (SELECT id FROM memory_jobs WHERE {where}"
        f" ORDER BY created_at, {dialect.insertion_order} LIMIT 1{dialect.claim})"
        " RETURNING *",
        (now, now, *params),
    ).fetchall()  # fetch all: a half-read RETURNING statement stays open past COMMIT
    return _job(rows[0]) if rows else None


def lease_many(conn: Connection, now: str, job_type: str, limit: int) -> list[Job]:
    """Claim up to `limit` of the oldest claimable pending jobs of one type in one statement
    (call inside write_tx), oldest first: the same claim as `lease`, without a statement and a
    subquery per job while the writer lock is held."""
    _check_type(job_type)
    if limit < 1:
        return []
    now = _ts(now)
    rows = conn.execute(
        "UPDATE memory_jobs SET status = 'leased', attempts = attempts + 1,"
        " leased_at = :now, updated_at = :now"
        " WHERE id IN (SELECT id FROM memory_jobs WHERE status = 'pending'"
        " AND attempts < max_attempts AND (run_after IS NULL OR run_after <= :now)"
        " AND job_type = :type ORDER BY created_at, rowid LIMIT :limit) RETURNING *, rowid",
        {"now": now, "type": job_type, "limit": limit},
    ).fetchall()  # fetch all: a half-read RETURNING statement stays open past COMMIT
    rows.sort(key=lambda row: (row["created_at"], row["rowid"]))  # RETURNING has no order
    return [_job(row) for row in rows]


def complete(
    conn: Executes, job_id: str, now: str, result: dict[str, Any] | None = None,
    *, dialect: Dialect = SQLITE,
) -> bool:
    """Mark a leased job completed; False when the id is unknown or the job is not leased."""
    now = _ts(now)
    cursor = conn.execute(dialect.sql(
        "UPDATE memory_jobs SET status = 'completed', completed_at = ?, updated_at = ?,"
        " result = ?, run_after = NULL WHERE id = ? AND status = 'leased'"),
        (now, now, dumps(result) if result is not None else None, job_id),
    )
    return cursor.rowcount == 1


def fail(
    conn: Executes, job_id: str, error: str, now: str, *, retry_delay_ms: int = 0,
    dialect: Dialect = SQLITE,
) -> str:
    """Record a failed attempt; return the job's new status ('pending' or 'dead'), or ''.

    '' means the id is unknown or the job is not leased (a reaper may have taken it back).
    A job with attempts left goes back to pending, claimable from `now + retry_delay_ms`.
    """
    now = _ts(now)
    run_after = _shift(now, retry_delay_ms) if retry_delay_ms > 0 else None
    rows = conn.execute(dialect.sql(
        "UPDATE memory_jobs SET"
        " status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'dead' END,"
        " run_after = CASE WHEN attempts < max_attempts THEN ? ELSE NULL END,"
        " leased_at = NULL, failed_at = ?, error = ?, updated_at = ?"
        " WHERE id = ? AND status = 'leased' RETURNING status"),
        (run_after, now, error[:MAX_ERROR_CHARS], now, job_id),
    ).fetchall()
    return str(rows[0][0]) if rows else ""


def reap_stale_leases(
    conn: Executes, now: str, lease_timeout_ms: int = DEFAULT_LEASE_TIMEOUT_MS,
    *, dialect: Dialect = SQLITE,
) -> int:
    """Give back jobs whose worker vanished: leases older than the timeout; return how many.

    A job with attempts left returns to pending; one that used its last attempt goes dead,
    since a job that crashes its worker every time must not loop forever.
    """
    now = _ts(now)
    cursor = conn.execute(dialect.sql(
        "UPDATE memory_jobs SET"
        " status = CASE WHEN attempts < max_attempts THEN 'pending' ELSE 'dead' END,"
        " failed_at = CASE WHEN attempts < max_attempts THEN failed_at ELSE ? END,"
        " leased_at = NULL, error = 'lease expired', updated_at = ?"
        " WHERE status = 'leased' AND leased_at < ?"),
        (now, now, _shift(now, -lease_timeout_ms)),
    )
    return cursor.rowcount


def requeue_dead(
    conn: Executes, now: str, *, job_ids: Sequence[str] | None = None,
    dialect: Dialect = SQLITE,
) -> int:
    """Reset dead jobs (all, or the given ids) to pending with a fresh set of attempts.

    The last error stays on the row, so an operator can still see why it died before.
    """
    now = _ts(now)
    where, params = "status = 'dead'", [now]
    if job_ids is not None:
        if not job_ids:
            return 0
        among, ids = dialect.one_of("id", job_ids)
        where += f" AND {among}"
        params.extend(ids)
    cursor = conn.execute(
        "UPDATE memory_jobs SET status = 'pending', attempts = 0, failed_at = NULL,"
        f" leased_at = NULL, run_after = NULL, updated_at = {dialect.mark} WHERE {where}",
        params,
    )
    return cursor.rowcount


def release_leases(conn: Connection, now: str, *, job_ids: Sequence[str] | None = None) -> int:
    """Graceful shutdown: leased jobs (all, or the given ids) go back to pending.

    The attempt is given back too: a job interrupted by a shutdown did not fail. Only the one
    process that runs workers (the daemon) may release all leases.
    """
    now = _ts(now)
    where, params = "status = 'leased'", [now]
    if job_ids is not None:
        if not job_ids:
            return 0
        where += f" AND id IN ({', '.join('?' * len(job_ids))})"
        params.extend(job_ids)
    cursor = conn.execute(
        "UPDATE memory_jobs SET status = 'pending', attempts = max(attempts - 1, 0),"
        f" leased_at = NULL, updated_at = ? WHERE {where}",
        params,
    )
    return cursor.rowcount


def purge(
    conn: Executes, now: str, *, completed_before: str, dead_before: str, limit: int,
    dialect: Dialect = SQLITE,
) -> tuple[int, int]:
    """Retention steps 5 and 6: delete old completed and dead jobs, at most `limit` of each.

    Returns (completed deleted, dead deleted). Oldest go first, so repeated sweeps catch up.
    """
    now, completed_before, dead_before = _ts(now), _ts(completed_before), _ts(dead_before)
    if completed_before > now or dead_before > now:
        # A cutoff in the future means a negative retention window: a caller's bug that
        # would delete jobs that finished a moment ago.
        raise InvalidInput("purge cutoffs must not be later than now")
    completed = _purge_step(conn, "completed", "completed_at", completed_before, limit, dialect)
    dead = _purge_step(conn, "dead", "failed_at", dead_before, limit, dialect)
    return completed, dead


def _purge_step(
    conn: Executes, status: str, column: str, before: str, limit: int, dialect: Dialect
) -> int:
    # The inner SELECT uses the partial index on (column) WHERE status = <status>.
    cursor = conn.execute(dialect.sql(
        f"DELETE FROM memory_jobs WHERE id IN (SELECT id FROM memory_jobs WHERE status = ?"
        f" AND {column} < ? ORDER BY {column} LIMIT ?)"),
        (status, before, max(limit, 0)),
    )
    return cursor.rowcount


# --- reads ----------------------------------------------------------------------------------


def get(
    conn: Executes, job_id: str, *, lock: bool = False, dialect: Dialect = SQLITE
) -> Job | None:
    """The job, read by column name (on PostgreSQL through a dict_row cursor); `lock` holds
    its row until the transaction ends."""
    row = conn.execute(
        dialect.sql("SELECT * FROM memory_jobs WHERE id = ?") + (dialect.row_lock if lock else ""),
        (job_id,)).fetchone()
    return _job(row) if row is not None else None


# --- a worker's own lease ---------------------------------------------------------------------


class LostLease(RuntimeError):
    """The job is no longer ours to end: the reaper gave it back and another worker took it."""


def owns(conn: Executes, job: Job, *, dialect: Dialect = SQLITE) -> bool:
    """Is `job` still under the lease we took? A reaped and re-leased job is 'leased' again,
    but with another lease time and one more attempt: then it is someone else's. The row is
    held until the transaction ends, so no reaper takes the lease back while it commits."""
    current = get(conn, job.id, lock=True, dialect=dialect)
    return (
        current is not None and current.status == "leased"
        and current.attempts == job.attempts and current.leased_at == job.leased_at
    )


def complete_owned(
    conn: Executes, job: Job, now: str, result: dict[str, Any], *, dialect: Dialect = SQLITE
) -> None:
    """Complete inside the transaction that writes the job's results; LostLease rolls it back."""
    if not owns(conn, job, dialect=dialect) or not complete(
            conn, job.id, now, result, dialect=dialect):
        raise LostLease(f"{job.job_type} job {job.id} is no longer leased by this worker")


def list_jobs(
    conn: Executes,
    *,
    status: str | None = None,
    job_type: str | None = None,
    limit: int = 50,
    offset: int = 0,
    dialect: Dialect = SQLITE,
) -> list[Job]:
    """Jobs newest first, optionally of one status and/or type."""
    clauses, params = [], []
    if status is not None:
        if status not in JOB_STATUSES:
            raise InvalidInput(f"unknown job status {status!r}")
        clauses.append("status = ?")
        params.append(status)
    if job_type is not None:
        _check_type(job_type)
        clauses.append("job_type = ?")
        params.append(job_type)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = conn.execute(dialect.sql(
        f"SELECT * FROM memory_jobs {where} ORDER BY created_at DESC,"
        f" {dialect.insertion_order} DESC LIMIT ? OFFSET ?"),
        (*params, max(limit, 0), max(offset, 0)),
    ).fetchall()
    return [_job(r) for r in rows]


def depths(conn: Executes) -> dict[str, dict[str, int]]:
    """Queue depth: job_type -> status -> count (only combinations that have jobs)."""
    out: dict[str, dict[str, int]] = {}
    rows = conn.execute(
        "SELECT job_type, status, count(*) AS n FROM memory_jobs GROUP BY job_type, status"
    ).fetchall()
    for job_type, status, n in rows:
        out.setdefault(str(job_type), {})[str(status)] = int(n)
    return out


def last_errors(conn: Executes, limit: int = 10, *, dialect: Dialect = SQLITE) -> list[Job]:
    """The most recently failed jobs that have not since completed, newest first."""
    rows = conn.execute(dialect.sql(
        "SELECT * FROM memory_jobs WHERE error IS NOT NULL AND status != 'completed'"
        f" ORDER BY updated_at DESC, {dialect.insertion_order} DESC LIMIT ?"),
        (max(limit, 0),),
    ).fetchall()
    return [_job(r) for r in rows]
