"""The embed worker: vectors for memories that were stored without one.

With `embedding.write_path: deferred` (the default) every write enqueues an `embed` job and
returns; with `inline` only what could not be embedded on the write path does (a remote
embedder, an inline call that failed). A tick leases the embed jobs waiting, up to
`LEASE_BATCHES` x `batch_size` (micro-batching: whatever arrived since the last tick goes in
one call, and under a backlog the embedder sorts 128 texts by length together, wasting less on
padding than 32 at a time did), embeds the distinct texts that still lack a current vector in
one call with no transaction open, then stores the vectors and completes the jobs in short
transactions of `STORE_CHUNK` jobs each. The lease is one statement (`jobs.lease_many`) and the
store is chunked because the writer lock is shared with every request's write: under 50 clients
a lease of 128 jobs one statement at a time held it 16-35 ms and storing 128 vectors in one
transaction 26-50 ms, and a `remember` arriving meanwhile waited that long; between chunks a
waiting write gets its turn. A provider fault fails every
job of the batch with the error text (retried with back-off, then dead).

When there are no jobs, at most every `sweep_interval_s` the worker also looks for live memories
with no current vector of the configured model (after a model change marked the old vectors
stale, say) and embeds one batch of them the same way.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import numpy as np

from signet.providers.embedder import Embedder
from signet.store import embeddings as emb_sql
from signet.store import jobs
from signet.store import memories as mem_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.types import format_ts
from signet.workers.leasing import describe_error, owns, retry_delay_ms

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
        store: Store,
        embedder: Embedder | None,
        *,
        frozen: bool = False,
        batch_size: int = 32,
        sweep_interval_s: float = 60.0,
        retry_base_ms: int = 1_000,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.frozen = frozen
        self.batch_size = batch_size
        self.sweep_interval = timedelta(seconds=sweep_interval_s)
        self.retry_base_ms = retry_base_ms
        self._last_sweep: datetime | None = None

    def tick(self, now: datetime) -> bool:
        if self.frozen or self.embedder is None:
            return False
        leased = self._lease_batch(now)
        if leased:
            self._embed_jobs(leased, now)
            return True
        return self._sweep(now)

    def _lease_batch(self, now: datetime) -> list[jobs.Job]:
        with self.store.write_tx() as conn:
            return jobs.lease_many(conn, format_ts(now), "embed", self.batch_size * LEASE_BATCHES)

    def _embed_jobs(self, leased: list[jobs.Job], now: datetime) -> None:
        memories = mem_sql.get_many(self.store.reader(), [j.memory_id or "" for j in leased])
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
        self, texts: dict[str, tuple[str, str | None]], now: datetime, leased: list[jobs.Job]
    ) -> int:
        assert self.embedder is not None
        model = self.embedder.model
        reader = self.store.reader()
        todo = {h: v for h, v in texts.items() if not emb_sql.has_current(reader, h, model)}
        texts_to_embed = [content for content, _ in todo.values()]
        vectors = self.embedder.embed(texts_to_embed) if todo else np.empty((0, 0), np.float32)
        unstored = {h: (vector, todo[h][1]) for h, vector in zip(todo, vectors, strict=True)}
        hash_of = {memory_id: h for h, (_, memory_id) in texts.items() if memory_id}
        stamp = format_ts(now)
        # Each chunk of jobs is completed in the transaction that stores its vectors, so a job
        # is never done without its vector; vectors no job asked for (the sweep's) follow.
        for start in range(0, len(leased), STORE_CHUNK):
            chunk = leased[start : start + STORE_CHUNK]
            needed = {hash_of[j.memory_id] for j in chunk if j.memory_id in hash_of}
            with self.store.write_tx() as conn:
                self._store(conn, {h: unstored.pop(h) for h in needed if h in unstored}, stamp)
                mem_sql.set_embedding_model(conn, [j.memory_id for j in chunk if j.memory_id], model)
                for job in chunk:
                    # A job the reaper took back is not ours to complete; the vector is in anyway.
                    if owns(conn, job):
                        jobs.complete(conn, job.id, stamp, {"model": model})
        rest = list(unstored.items())
        for start in range(0, len(rest), STORE_CHUNK):
            with self.store.write_tx() as conn:
                self._store(conn, dict(rest[start : start + STORE_CHUNK]), stamp)
        return len(todo)

    def _store(
        self, conn: Connection, vectors: dict[str, tuple[np.ndarray, str | None]], stamp: str
    ) -> None:
        assert self.embedder is not None
        model = self.embedder.model
        for content_hash, (vector, memory_id) in vectors.items():
            if not emb_sql.has_current(conn, content_hash, model):
                emb_sql.upsert(
                    conn, content_hash, vector, model=model, now=stamp, source_id=memory_id
                )

    def _fail_all(self, leased: list[jobs.Job], exc: Exception, now: datetime) -> None:
        error = describe_error(exc)
        log.warning("embedding %d memories failed: %s", len(leased), error)
        with self.store.write_tx() as conn:
            for job in leased:
                if owns(conn, job):
                    delay = retry_delay_ms(job.attempts, self.retry_base_ms)
                    jobs.fail(conn, job.id, error, format_ts(now), retry_delay_ms=delay)

    def _sweep(self, now: datetime) -> bool:
        if self._last_sweep is not None and now - self._last_sweep < self.sweep_interval:
            return False
        self._last_sweep = now
        assert self.embedder is not None
        missing = emb_sql.missing(self.store.reader(), self.embedder.model, self.batch_size)
        if not missing:
            return False
        # missing() gives (hash, content); the vector's source_id is informational only.
        texts: dict[str, tuple[str, str | None]] = {h: (content, None) for h, content in missing}
        try:
            self._embed_and_store(texts, now, [])
        except Exception as exc:
            log.warning("re-embedding stale or missing vectors failed: %s", describe_error(exc))
            return False
        self._last_sweep = None  # more may be waiting: look again on the next tick
        return True
