"""The retention worker (seed 000, "Retention"): purges what has outlived its window, on an
interval (`retention.intervalMs`, 6 hours by default).

One sweep runs the seed's six steps in order, each in its own short write transaction so the
write lock is never held across the whole sweep, each capped at `retention.batchLimit` rows
(500) so one sweep has bounded latency; a backlog is worked off by later sweeps:

1. graph links of tombstones older than `tombstoneRetentionMs`: their mention rows dropped,
   the entities' mention counts decremented, entities left with none removed;
2. the vectors of those tombstones (unless a live memory or a tombstone not yet expired
   shares the content hash);
3. the tombstones themselves (the FTS trigger cleans the index);
4. history events older than `historyRetentionMs`;
5. completed jobs older than `completedJobRetentionMs`;
6. dead jobs older than `deadJobRetentionMs`;

and then three more of the same kind: cold-tier rows older than `coldRetentionMs`, idempotency
keys older than `idempotencyKeyRetentionMs` and rows of the hooks' injection ledger older than
`hookLedgerRetentionMs`. Every delete re-checks its expiry condition in
SQL, so a live memory is never touched. `sweep(..., dry_run=True)` counts instead of deleting
(`signet retention run --dry-run`). Each sweep logs its counts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from signet.config import RetentionConfig
from signet.store import embeddings as emb_sql
from signet.store import jobs as jobs_sql
from signet.store import knowledge as know_sql
from signet.store import retention as ret_sql
from signet.store.db import Store
from signet.types import format_ts

log = logging.getLogger(__name__)

STEPS = (
    "graph_links", "embeddings", "tombstones", "history", "completed_jobs", "dead_jobs",
    "cold_rows", "idempotency_keys", "hook_ledger",
)


@dataclass
class RetentionReport:
    """Rows purged (or, in a dry run, that would be) per step, in the order they ran."""

    now: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    entities_removed: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, object]:
        return {"now": self.now, "dry_run": self.dry_run, "steps": dict(self.counts),
                "entities_removed": self.entities_removed, "total": self.total}


def _cutoff(now: datetime, window_ms: int) -> str:
    return format_ts(now - timedelta(milliseconds=window_ms))


def sweep(store: Store, cfg: RetentionConfig, now: datetime, *, dry_run: bool = False) -> RetentionReport:
    """One pass of every step, each in its own transaction (or read-only when `dry_run`)."""
    report = RetentionReport(format_ts(now), dry_run)
    limit = cfg.batch_limit
    tomb_before = _cutoff(now, cfg.tombstone_retention_ms)
    ids = ret_sql.expired_tombstones(store.reader(), tomb_before, limit)
    if dry_run:
        _count_all(store, cfg, now, ids, tomb_before, report)
        return report
    with store.write_tx() as conn:  # 1. graph links
        live_ids = ret_sql.still_expired(conn, ids, tomb_before)
        graph = know_sql.decrement_entity_mentions(conn, live_ids)
    report.counts["graph_links"] = graph["links"]
    report.entities_removed = graph["orphans"]
    with store.write_tx() as conn:  # 2. embeddings
        hashes = ret_sql.tombstone_vector_hashes(conn, ids, tomb_before)
        report.counts["embeddings"] = emb_sql.delete_for_hashes(conn, hashes)
    with store.write_tx() as conn:  # 3. tombstones
        report.counts["tombstones"] = ret_sql.delete_tombstones(conn, ids, tomb_before)
    with store.write_tx() as conn:  # 4. history
        report.counts["history"] = ret_sql.delete_older(
            conn, "history", _cutoff(now, cfg.history_retention_ms), limit)
    with store.write_tx() as conn:  # 5. and 6. completed and dead jobs (one statement each)
        completed, dead = jobs_sql.purge(
            conn, format_ts(now), completed_before=_cutoff(now, cfg.completed_job_retention_ms),
            dead_before=_cutoff(now, cfg.dead_job_retention_ms), limit=limit,
        )
    report.counts["completed_jobs"], report.counts["dead_jobs"] = completed, dead
    for kind, step, window in _windows(cfg):
        with store.write_tx() as conn:
            report.counts[step] = ret_sql.delete_older(conn, kind, _cutoff(now, window), limit)
    return report


def _windows(cfg: RetentionConfig) -> tuple[tuple[str, str, int], ...]:
    """(table kind in store/retention.py, step name, window in ms) of the plain time windows."""
    return (
        ("cold", "cold_rows", cfg.cold_retention_ms),
        ("idempotency_keys", "idempotency_keys", cfg.idempotency_key_retention_ms),
        ("hook_ledger", "hook_ledger", cfg.hook_ledger_retention_ms),
    )


def _count_all(
    store: Store, cfg: RetentionConfig, now: datetime, ids: list[str], tomb_before: str,
    report: RetentionReport,
) -> None:
    conn, limit = store.reader(), cfg.batch_limit
    report.counts["graph_links"] = ret_sql.count_mention_links(conn, ids)
    report.counts["embeddings"] = len(ret_sql.tombstone_vector_hashes(conn, ids, tomb_before))
    report.counts["tombstones"] = len(ids)
    report.counts["history"] = ret_sql.count_older(
        conn, "history", _cutoff(now, cfg.history_retention_ms), limit)
    report.counts["completed_jobs"] = ret_sql.count_jobs(
        conn, "completed", _cutoff(now, cfg.completed_job_retention_ms), limit)
    report.counts["dead_jobs"] = ret_sql.count_jobs(
        conn, "dead", _cutoff(now, cfg.dead_job_retention_ms), limit)
    for kind, step, window in _windows(cfg):
        report.counts[step] = ret_sql.count_older(conn, kind, _cutoff(now, window), limit)


class RetentionWorker:
    """Runs `sweep` at most once per `retention.intervalMs` of the `now` it is given (the
    first tick sweeps at once: a daemon that restarts often must still purge)."""

    name = "retention"

    def __init__(self, store: Store, cfg: RetentionConfig, *, frozen: bool = False) -> None:
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
