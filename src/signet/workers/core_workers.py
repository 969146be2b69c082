"""The workers that run over the store seam (store/backend.py `CoreStore`): the PostgreSQL path.

- `CoreEmbedWorker`: the embed worker (workers/embed_worker.py) on the seam. A tick leases up to
  `batch_size` x LEASE_BATCHES `embed` jobs (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so the
  workers of several daemons on one database never take the same job and never wait on each
  other), embeds the distinct contents still without a current vector in one call with no
  transaction open, stores the vectors in one transaction and completes the jobs. A provider
  fault fails the batch's jobs with the error (retried with back-off, then dead). A job the
  stale-lease reaper took back meanwhile is not completed (`complete` answers False): the
  vector is stored all the same, and whoever leases the job again finds it already there.
  It keeps the (id, leased_at) of the jobs its running tick holds: a daemon stopping while a
  tick outlives the stop hands those back, and only those (`held_leases`).
- `CoreReaperWorker`: the stale-lease reaper on the seam: every `interval_s`, jobs leased longer
  than `pipeline.lease_timeout_ms` (their daemon died or hung) go back to the queue. Any daemon
  may run it; the UPDATE is one statement, so two reapers at once release each job once.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from signet.providers.embedder import Embedder
from signet.store.backend import CoreStore
from signet.store.jobs import Job
from signet.types import format_ts
from signet.workers.embed_worker import LEASE_BATCHES
from signet.workers.leasing import describe_error, retry_delay_ms

log = logging.getLogger(__name__)


class CoreEmbedWorker:
    name = "embed"

    def __init__(
        self, core: CoreStore, embedder: Embedder | None, *, frozen: bool = False,
        batch_size: int = 32, retry_base_ms: int = 1_000,
    ) -> None:
        self.core = core
        self.embedder = embedder
        self.frozen = frozen
        self.batch_size = batch_size
        self.retry_base_ms = retry_base_ms
        # The leases this worker holds right now, job id -> leased_at: what a daemon stopping
        # while a tick still runs hands back (CoreApp.release_worker_leases).
        self._held: dict[str, str] = {}
        self._held_lock = threading.Lock()

    def held_leases(self) -> list[tuple[str, str]]:
        """(job id, leased_at) of every job leased by a tick that has not ended yet."""
        with self._held_lock:
            return list(self._held.items())

    def tick(self, now: datetime) -> bool:
        if self.frozen or self.embedder is None:
            return False
        stamp = format_ts(now)
        leased: list[Job] = []
        try:
            while len(leased) < self.batch_size * LEASE_BATCHES:
                job = self.core.lease(stamp, job_types=["embed"])
                if job is None:
                    break
                leased.append(job)
                with self._held_lock:
                    self._held[job.id] = job.leased_at or stamp
            if not leased:
                return False
            self._run(leased, stamp)
        finally:
            with self._held_lock:
                for job in leased:
                    self._held.pop(job.id, None)
        return True

    def _run(self, leased: list[Job], stamp: str) -> None:
        try:
            self._embed(leased, stamp)
        except Exception as exc:  # noqa: BLE001 - every job of the batch fails with the cause
            error = describe_error(exc)
            log.warning("embedding %d memories failed: %s", len(leased), error)
            for job in leased:
                self.core.fail(job.id, error, stamp,
                               retry_delay_ms=retry_delay_ms(job.attempts, self.retry_base_ms))

    def _embed(self, leased: list[Job], stamp: str) -> None:
        assert self.embedder is not None
        model = self.embedder.model
        memories = self.core.get_memories([j.memory_id for j in leased if j.memory_id])
        todo: dict[str, tuple[str, str]] = {}
        live = [m for m in memories.values() if m.content_hash and not m.is_deleted]
        for memory in live:
            content_hash = memory.content_hash or ""
            if content_hash not in todo and not self.core.has_vector(content_hash, model):
                todo[content_hash] = (memory.content, memory.id)
        matrix = self.embedder.embed([content for content, _ in todo.values()]) if todo else None
        if live:  # each now has a current vector of `model`: say so on the memory too
            self.core.store_vectors(
                [(h, matrix[row], mid) for row, (h, (_, mid)) in enumerate(todo.items())]
                if matrix is not None else [],
                model=model, now=stamp, embedded=[m.id for m in live],
            )
        for job in leased:
            self.core.complete(job.id, stamp, {"model": model})
        log.debug("embedded %d vectors for %d jobs", len(todo), len(leased))


class CoreReaperWorker:
    name = "reaper"

    def __init__(self, core: CoreStore, lease_timeout_ms: int, interval_s: float = 60.0) -> None:
        self.core = core
        self.lease_timeout_ms = lease_timeout_ms
        self.interval = timedelta(seconds=interval_s)
        self._last: datetime | None = None

    def tick(self, now: datetime) -> bool:
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        released = self.core.reap_stale_leases(format_ts(now), self.lease_timeout_ms)
        if released:
            log.info("returned %d stale leased job(s) to the queue", released)
        return released > 0
