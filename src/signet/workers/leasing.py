"""What every job worker does around its own work: lease a job, and fail it well. The lease is its
own short transaction, the work runs with none open, and the job ends in the transaction writing
its results. A raising work fails the job (pending again after min(1 s * 2^(attempt-1), 30 s), or
dead on the last attempt, when `on_dead` runs in the same transaction); a rate-limited LLM
releases the job and pauses the worker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from signet.errors import RateLimited, SignetError
from signet.store import jobs
from signet.store.jobs import LostLease
from signet.store.pipeline import PipelineStore, PipelineTx
from signet.types import Memory, format_ts

log = logging.getLogger(__name__)

RETRY_BASE_MS = 1_000
RETRY_CAP_MS = 30_000
RATE_LIMIT_PAUSE = timedelta(seconds=30)


def lease_one(store: PipelineStore, job_type: str, now: datetime) -> jobs.Job | None:
    return store.lease(format_ts(now), job_types=[job_type])


def retry_delay_ms(attempts: int, base_ms: int = RETRY_BASE_MS, cap_ms: int = RETRY_CAP_MS) -> int:
    return int(min(base_ms * 2 ** max(attempts - 1, 0), cap_ms))


def describe_error(exc: BaseException) -> str:
    """The text kept in a failed job's error field."""
    if isinstance(exc, SignetError):
        return f"{type(exc).__name__} ({exc.code}): {exc}"
    return f"{type(exc).__name__}: {exc}"


def fail_job(
    store: PipelineStore,
    job: jobs.Job,
    exc: BaseException,
    now: datetime,
    *,
    retry_base_ms: int = RETRY_BASE_MS,
    on_dead: Callable[[PipelineTx], None] | None = None,
) -> str:
    """Record the failure; return the job's new status ('pending', 'dead', or '' if lost)."""
    error = describe_error(exc)
    if isinstance(exc, SignetError):
        log.warning("%s job %s failed (attempt %d/%d): %s", job.job_type, job.id,
                    job.attempts, job.max_attempts, error)
    else:  # not an expected provider fault: keep the traceback for whoever debugs it
        log.error("%s job %s crashed", job.job_type, job.id, exc_info=exc)
    delay = retry_delay_ms(job.attempts, retry_base_ms)
    with store.write() as tx:
        if not owns(tx, job):
            log.warning("%s job %s was taken back before it failed here", job.job_type, job.id)
            return ""
        status = tx.fail_job(job.id, error, format_ts(now), retry_delay_ms=delay)
        if status == "dead" and on_dead is not None:
            on_dead(tx)
    return status


def release_job(
    store: PipelineStore, job: jobs.Job, now: datetime, why: BaseException
) -> None:
    """Hand a job back untouched (its attempt too): the provider's rate limit is not the job's
    fault, so it must not bring the job closer to dead. The worker pauses instead."""
    log.info("%s job %s released: %s", job.job_type, job.id, describe_error(why))
    with store.write() as tx:
        if owns(tx, job):
            tx.release_job(job.id, format_ts(now))


def run_one(
    store: PipelineStore,
    job_type: str,
    now: datetime,
    work: Callable[[jobs.Job, datetime], None],
    *,
    retry_base_ms: int = RETRY_BASE_MS,
    on_dead: Callable[[PipelineTx, jobs.Job], None] | None = None,
) -> tuple[bool, datetime | None]:
    """Lease one job of `job_type` and run `work` on it; return (did work, pause until).

    The one place where a worker's failure becomes the job's: a rate-limited LLM releases the
    job and asks the worker to pause, a lost lease leaves the job to its new owner, and any
    other exception fails the job (dead on its last attempt, then `on_dead`)."""
    job = lease_one(store, job_type, now)
    if job is None:
        return False, None
    try:
        work(job, now)
    except RateLimited as exc:
        release_job(store, job, now, exc)
        return True, now + RATE_LIMIT_PAUSE
    except LostLease as exc:  # another worker owns the job now; its outcome stands
        log.warning("%s", exc)
    except Exception as exc:  # any failure belongs to the job, not to the loop
        dead = None if on_dead is None else (lambda tx: on_dead(tx, job))
        fail_job(store, job, exc, now, retry_base_ms=retry_base_ms, on_dead=dead)
    return True, None


@dataclass
class JobRunner:
    """The skeleton every worker over `memory_jobs` shares: one job of `job_type` per tick
    through `run_one`, and no tick while a rate-limited provider refills. The worker keeps its
    own gate (frozen, disabled) and its `work`; this keeps the lease, the failure and the pause."""

    store: PipelineStore
    job_type: str
    work: Callable[[jobs.Job, datetime], None]
    _: KW_ONLY
    retry_base_ms: int = RETRY_BASE_MS
    on_dead: Callable[[PipelineTx, jobs.Job], None] | None = None
    paused_until: datetime | None = field(default=None, init=False)

    def tick(self, now: datetime) -> bool:
        if self.paused_until is not None and now < self.paused_until:
            return False  # the provider's rate limit: nothing to do until it refills
        did_work, pause = run_one(
            self.store, self.job_type, now, self.work, retry_base_ms=self.retry_base_ms,
            on_dead=self.on_dead,
        )
        if pause is not None:
            self.paused_until = pause
        return did_work


def live_memory(store: PipelineStore, job: jobs.Job, now: datetime) -> Memory | None:
    """The live memory `job` is about; None when it is gone, the job then completed as skipped."""
    memory = store.get_memory(job.memory_id or "")
    if memory is None or memory.is_deleted:
        with store.write() as tx:
            complete_job(tx, job, now, {"skipped": "memory is gone"})
        return None
    return memory


def on_live_memory(
    store: PipelineStore, work: Callable[[jobs.Job, Memory, datetime], None]
) -> Callable[[jobs.Job, datetime], None]:
    """A job's work, run on the live memory the job is about (`live_memory`); a job whose
    memory is gone is completed as skipped and `work` does not run."""

    def run(job: jobs.Job, now: datetime) -> None:
        memory = live_memory(store, job, now)
        if memory is not None:
            work(job, memory, now)

    return run


def complete_job(tx: PipelineTx, job: jobs.Job, now: datetime, result: dict[str, Any]) -> None:
    """Complete inside the transaction that writes the job's results; LostLease rolls it back."""
    if not owns(tx, job) or not tx.complete_job(job.id, format_ts(now), result):
        raise LostLease(f"{job.job_type} job {job.id} is no longer leased by this worker")


def owns(tx: PipelineTx, job: jobs.Job) -> bool:
    """Is `job` still under the lease we took? A reaped and re-leased job is 'leased' again,
    but with another lease time and one more attempt: then it is someone else's."""
    current = tx.get_job(job.id)
    return (
        current is not None and current.status == "leased"
        and current.attempts == job.attempts and current.leased_at == job.leased_at
    )
