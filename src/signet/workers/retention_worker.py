"""The retention worker: purges what has outlived its window, every `retention.intervalMs`.

Each step (expired tombstones with their links and vectors, old history, finished jobs, cold-tier
rows, idempotency keys, injection-ledger rows) is its own write transaction of at most
`retention.batchLimit` rows, so the lock is never held long. Every delete re-checks its expiry in
SQL, so a live memory is never touched. `dry_run` counts instead.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from signet.config import RetentionConfig
from signet.store.operations import RetentionStore
from signet.types import format_ts

log = logging.getLogger(__name__)

STEPS = (
    "graph_links", "embeddings", "tombstones", "history", "completed_jobs", "dead_jobs",
    "cold_rows", "idempotency_keys", "hook_ledger",
)
LOCK = "retention"  # the store-wide lock a sweep holds (store/operations.py `exclusive`)


@dataclass
class RetentionReport:
    """Rows purged (or, in a dry run, that would be) per step, in the order they ran; the steps
    whose tables are not on this store backend; `skipped` when another daemon on the same
    store was sweeping (it does the work; this sweep did none)."""

    now: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    entities_removed: int = 0
    not_on_backend: list[str] = field(default_factory=list)
    skipped: str | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def put(self, step: str, count: int | None) -> None:
        if count is None:
            self.not_on_backend.append(step)
        else:
            self.counts[step] = count

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "now": self.now, "dry_run": self.dry_run, "steps": dict(self.counts),
            "entities_removed": self.entities_removed, "total": self.total,
        }
        if self.not_on_backend:
            out["not_on_backend"] = list(self.not_on_backend)
        if self.skipped:
            out["skipped"] = self.skipped
        return out


def _cutoff(now: datetime, window_ms: int) -> str:
    return format_ts(now - timedelta(milliseconds=window_ms))


def sweep(
    store: RetentionStore, cfg: RetentionConfig, now: datetime, *, dry_run: bool = False
) -> RetentionReport:
    """One pass of every step, each in its own transaction (or read-only when `dry_run`),
    under the store-wide retention lock: when another daemon holds it, nothing is done here."""
    report = RetentionReport(format_ts(now), dry_run)
    with store.exclusive(LOCK) as held:
        if not held:
            report.skipped = "another daemon on this store is running retention"
            return report
        _sweep(store, cfg, now, report)
    return report


def _sweep(store: RetentionStore, cfg: RetentionConfig, now: datetime, report: RetentionReport) -> None:
    limit = cfg.batch_limit
    tomb_before = _cutoff(now, cfg.tombstone_retention_ms)
    ids = store.expired_tombstones(tomb_before, limit)
    if report.dry_run:
        _count_all(store, cfg, now, ids, tomb_before, report)
        return
    graph = store.purge_graph_links(ids, tomb_before)  # 1. graph links
    report.put("graph_links", None if graph is None else graph["links"])
    report.entities_removed = graph["orphans"] if graph else 0
    report.put("embeddings", store.purge_tombstone_vectors(ids, tomb_before))  # 2.
    report.put("tombstones", store.delete_tombstones(ids, tomb_before))  # 3.
    report.put("history", store.delete_older(  # 4.
        "history", _cutoff(now, cfg.history_retention_ms), limit))
    completed, dead = store.purge_jobs(  # 5. and 6. completed and dead jobs
        format_ts(now), completed_before=_cutoff(now, cfg.completed_job_retention_ms),
        dead_before=_cutoff(now, cfg.dead_job_retention_ms), limit=limit,
    )
    report.put("completed_jobs", completed)
    report.put("dead_jobs", dead)
    for kind, step, window in _windows(cfg):
        report.put(step, store.delete_older(kind, _cutoff(now, window), limit))


def _windows(cfg: RetentionConfig) -> tuple[tuple[str, str, int], ...]:
    """(table kind in store/retention.py, step name, window in ms) of the plain time windows."""
    return (
        ("cold", "cold_rows", cfg.cold_retention_ms),
        ("idempotency_keys", "idempotency_keys", cfg.idempotency_key_retention_ms),
        ("hook_ledger", "hook_ledger", cfg.hook_ledger_retention_ms),
    )


def _count_all(
    store: RetentionStore, cfg: RetentionConfig, now: datetime, ids: list[str],
    tomb_before: str, report: RetentionReport,
) -> None:
    limit = cfg.batch_limit
    report.put("graph_links", store.count_mention_links(ids))
    report.put("embeddings", store.count_tombstone_vectors(ids, tomb_before))
    report.put("tombstones", len(ids))
    report.put("history", store.count_older(
        "history", _cutoff(now, cfg.history_retention_ms), limit))
    report.put("completed_jobs", store.count_jobs(
        "completed", _cutoff(now, cfg.completed_job_retention_ms), limit))
    report.put("dead_jobs", store.count_jobs(
        "dead", _cutoff(now, cfg.dead_job_retention_ms), limit))
    for kind, step, window in _windows(cfg):
        report.put(step, store.count_older(kind, _cutoff(now, window), limit))


class RetentionWorker:
    """Runs `sweep` at most once per `retention.intervalMs` of the `now` it is given (the
    first tick sweeps at once: a daemon that restarts often must still purge)."""

    name = "retention"

    def __init__(
        self, store: RetentionStore, cfg: RetentionConfig, *, frozen: bool = False
    ) -> None:
        self.store = store
        self.cfg = cfg
        self.frozen = frozen  # mutationsFrozen: reads only, so nothing is purged either
        self.interval = timedelta(milliseconds=cfg.interval_ms)
        self.last_run: datetime | None = None
        self.last_report: RetentionReport | None = None

    def tick(self, now: datetime) -> bool:
        if self.frozen or (self.last_run is not None and now - self.last_run < self.interval):
            return False
        self.last_run = now
        report = sweep(self.store, self.cfg, now)
        self.last_report = report
        log.info("retention sweep purged %d row(s): %s", report.total, report.counts,
                 extra={"retention": report.to_dict()})
        return report.total > 0
