"""The embed worker: vectors for memories stored without one, on either backend.

A tick leases `embed` jobs, embeds their distinct texts with no transaction open, then stores the
vectors in chunks of STORE_CHUNK, so a request's write gets the writer between chunks. A provider
fault fails the batch's jobs (retried with back-off). When idle, now and then, it embeds live
memories lacking a current vector of the configured model.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import numpy as np

from signet.providers.embedder import Embedder
from signet.store.backend import CoreStore
from signet.store.jobs import Job
from signet.types import format_ts
from signet.workers.leasing import describe_error, retry_delay_ms
from signet.workers.scheduled import RunInterval

log = logging.getLogger(__name__)

# Jobs one tick takes, in embedder batches: enough texts for length bucketing to pay, few
# enough that the first vectors of a backlog are stored within about a second.
LEASE_BATCHES = 4
# Jobs whose vectors are stored (and jobs completed) per write transaction.
STORE_CHUNK = 16


class EmbedWorker:
    name = "embed"

    def __init__(
        self,
        core: CoreStore,
        embedder: Embedder | None,
        *,
        frozen: bool = False,
        batch_size: int = 32,
        sweep_interval_s: float = 60.0,
        retry_base_ms: int = 1_000,
    ) -> None:
        self.core = core
        self.embedder = embedder
        self.frozen = frozen
        self.batch_size = batch_size
        self._sweeps = RunInterval(timedelta(seconds=sweep_interval_s))
        self.retry_base_ms = retry_base_ms

    def tick(self, now: datetime) -> bool:
        if self.frozen or self.embedder is None:
            return False
        leased = self.core.lease_many(format_ts(now), "embed", self.batch_size * LEASE_BATCHES)
        if leased:
            self._embed_jobs(leased, now)
            return True
        return self._sweep(now)

    def _embed_jobs(self, leased: list[Job], now: datetime) -> None:
        memories = self.core.get_memories([j.memory_id or "" for j in leased])
        texts: dict[str, tuple[str, str | None]] = {
            m.content_hash: (m.content, m.id) for m in memories.values()
            if m.content_hash and not m.is_deleted
        }
        try:
            stored = self._embed_and_store(texts, now, leased)
        except Exception as exc:
            self._fail_all(leased, exc, now)
            return
        log.debug("embedded %d vectors for %d jobs", stored, len(leased))

    def _embed_and_store(
        self, texts: dict[str, tuple[str, str | None]], now: datetime, leased: list[Job]
    ) -> int:
        assert self.embedder is not None
        model = self.embedder.model
        # Every job's text goes to the provider, its vector stored or not: vectors are shared
        # by every scope, and a job done without a call (while the provider fails, say) would
        # tell its memory's owner that another scope holds the same text.
        todo = dict(texts)
        texts_to_embed = [content for content, _ in todo.values()]
        vectors = self.embedder.embed(texts_to_embed) if todo else np.empty((0, 0), np.float32)
        unstored = {h: (vector, todo[h][1]) for h, vector in zip(todo, vectors, strict=True)
                    if not self.core.has_vector(h, model)}
        hash_of = {memory_id: h for h, (_, memory_id) in texts.items() if memory_id}
        stamp = format_ts(now)
        # Each chunk of jobs is completed in the transaction that stores its vectors, so a job
        # is never done without its vector; vectors no job asked for (the sweep's) follow.
        for start in range(0, len(leased), STORE_CHUNK):
            chunk = leased[start : start + STORE_CHUNK]
            needed = {hash_of[j.memory_id] for j in chunk if j.memory_id in hash_of}
            items = [(h, *unstored.pop(h)) for h in needed if h in unstored]
            self.core.store_vectors(items, model=model, now=stamp, done=chunk)
        rest = [(h, vector, memory_id) for h, (vector, memory_id) in unstored.items()]
        for start in range(0, len(rest), STORE_CHUNK):
            self.core.store_vectors(rest[start : start + STORE_CHUNK], model=model, now=stamp)
        return len(todo)

    def _fail_all(self, leased: list[Job], exc: Exception, now: datetime) -> None:
        error = describe_error(exc)
        log.warning("embedding %d memories failed: %s", len(leased), error)
        failures = [(job, retry_delay_ms(job.attempts, self.retry_base_ms)) for job in leased]
        self.core.fail_leased(failures, error, format_ts(now))

    def _sweep(self, now: datetime) -> bool:
        if not self._sweeps.due(now):
            return False
        assert self.embedder is not None
        missing = self.core.missing_vectors(self.embedder.model, self.batch_size)
        if not missing:
            return False
        # missing_vectors gives (hash, content); the vector's source_id is informational only.
        texts: dict[str, tuple[str, str | None]] = {h: (content, None) for h, content in missing}
        try:
            self._embed_and_store(texts, now, [])
        except Exception as exc:
            log.warning("re-embedding stale or missing vectors failed: %s", describe_error(exc))
            return False
        self._sweeps.last_run = None  # more may be waiting: look again on the next tick
        return True
