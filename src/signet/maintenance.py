"""Diagnostics and repair actions an operator runs on a live store (seed 002's repair actions).

- the pipeline's queue: depths per job type and status, the most recent failures;
- requeue dead jobs; release stale leases (leases older than `leaseTimeoutMs`, or a given age,
  whose worker vanished) — the reaper's job, on demand;
- the FTS consistency check (FTS5 'integrity-check' on both indexes, plus row counts) and a
  rebuild of both indexes from the memories table;
- re-embed: an embed job for every live memory that has no current vector of the configured
  model (the embed worker does the work in the background, outside any transaction);
- the embeddings audit, and a health probe: one tiny embedding call, timed;
- the autonomous maintenance run (`run_maintenance`, seed 002's `autonomous.*` flags): health
  checks, and in execute mode the repairs, each bounded and recorded (see "Maintenance runs").

Every function takes the memory service (its store, config and embedder) and returns plain
JSON-ready data; writes go through `store.write_tx()` and SQL stays in `signet.store`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signet.clock import stamp
from signet.errors import Conflict, InvalidInput, ProviderError
from signet.providers.guard import ProviderGuard
from signet.services.write_policy import pipeline_brief
from signet.store import embeddings as emb_sql
from signet.store import fts as fts_sql
from signet.store import health as health_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import sessions as sessions_sql
from signet.types import format_ts
from signet.workers.retention_worker import RetentionReport, sweep

if TYPE_CHECKING:
    from signet.providers.llm import LLM
    from signet.services.memory import MemoryService

__all__ = [
    "app_status",
    "run_retention",
    "check_health",
    "embeddings_health",
    "embeddings_status",
    "fts_check",
    "fts_rebuild",
    "pipeline_queue",
    "re_embed",
    "release_stale_leases",
    "maintenance_report",
    "run_maintenance",
    "status_summary",
]

log = logging.getLogger(__name__)

MAX_REEMBED = 100_000
HEALTH_TEXT = "signet embedding health check"


def pipeline_queue(
    service: MemoryService, llm: LLM | None, errors_limit: int = 10
) -> dict[str, Any]:
    conn = service.store.reader()
    cfg = service.config.pipeline
    return {
        "enabled": cfg.enabled,
        "shadow_mode": cfg.shadow_mode,
        "mutations_frozen": cfg.mutations_frozen,
        "llm": {"provider": llm.name, "model": llm.model} if llm else None,
        "queue": jobs_sql.depths(conn),
        "summary_queue": sessions_sql.summary_counts(conn),  # summary_jobs: status -> count
        "last_errors": [
            {"id": j.id, "job_type": j.job_type, "status": j.status, "memory_id": j.memory_id,
             "attempts": j.attempts, "max_attempts": j.max_attempts, "error": j.error,
             "updated_at": j.updated_at}
            for j in jobs_sql.last_errors(conn, errors_limit)
        ],
    }


def release_stale_leases(service: MemoryService, older_than_ms: int | None = None) -> dict[str, Any]:
    """Leases older than `older_than_ms` (default: the configured lease timeout) go back to the
    queue, or dead on their last attempt; returns how many."""
    age = service.config.pipeline.lease_timeout_ms if older_than_ms is None else older_than_ms
    if age < 0:
        raise InvalidInput("older_than_ms must not be negative")
    with service.store.write_tx() as conn:
        released = jobs_sql.reap_stale_leases(conn, stamp(service.clock), age)
    return {"released": released, "older_than_ms": age}


def fts_check(service: MemoryService) -> dict[str, Any]:
    conn = service.store.reader()
    # An external-content FTS5 table counts its content table's rows; the _docsize shadow
    # table holds one row per document the index really holds.
    counts = {"memories": int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])}
    for table in fts_sql.TABLES:
        counts[table] = int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0])
    consistent = fts_sql.integrity_check(conn)
    return {"ok": consistent and len(set(counts.values())) == 1, "integrity": consistent,
            "rows": counts}


def fts_rebuild(service: MemoryService) -> dict[str, Any]:
    service.check_mutable()
    started = time.perf_counter()
    with service.store.write_tx() as conn:
        fts_sql.rebuild(conn)
    took = round((time.perf_counter() - started) * 1000, 3)
    return {"rebuilt": list(fts_sql.TABLES), "ms": took, "check": fts_check(service)}


def re_embed(service: MemoryService, limit: int = MAX_REEMBED) -> dict[str, Any]:
    if service.embedder is None:
        raise Conflict("no embedding provider is configured (embedding.provider: none)",
                       code="no_embedder")
    service.check_mutable()
    now = stamp(service.clock)
    with service.store.write_tx() as conn:
        ids = emb_sql.missing_memory_ids(conn, service.embedder.model, max(1, limit))
        enqueued = sum(
            1 for memory_id in ids if jobs_sql.enqueue(conn, "embed", memory_id=memory_id, now=now)
        )
    return {"missing": len(ids), "enqueued": enqueued, "already_queued": len(ids) - enqueued,
            "model": service.embedder.model}


def embeddings_status(service: MemoryService) -> dict[str, Any]:
    conn = service.store.reader()
    embedder = service.embedder
    queue = jobs_sql.depths(conn).get("embed", {})
    return {
        "provider": embedder.name if embedder else "none",
        "model": embedder.model if embedder else None,
        "dimensions": embedder.dimensions if embedder else None,
        "audit": emb_sql.audit(conn, embedder.model) if embedder else None,
        "jobs": queue,
    }


def embeddings_health(service: MemoryService) -> dict[str, Any]:
    """One tiny embedding call, timed; `ok` false with the error code when it fails."""
    embedder = service.embedder
    if embedder is None:
        return {"ok": True, "provider": "none", "model": None, "latency_ms": None,
                "detail": "no embedding provider configured; recall is keyword-only"}
    base = {"provider": embedder.name, "model": embedder.model}
    started = time.perf_counter()
    try:
        vectors = embedder.embed([HEALTH_TEXT])
    except ProviderError as exc:
        return {**base, "ok": False, "latency_ms": _ms(started), "error": exc.code,
                "detail": exc.message}
    dims = int(vectors.shape[-1]) if hasattr(vectors, "shape") else len(vectors[0])
    ok = dims == embedder.dimensions
    return {**base, "ok": ok, "latency_ms": _ms(started), "dimensions": dims,
            "detail": "ok" if ok else f"expected {embedder.dimensions} dimensions, got {dims}"}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


# --- Maintenance runs -------------------------------------------------------------------------
#
# A run checks the store's health (cheap counts only, it runs on a live daemon) and, in execute
# mode, repairs what a check found, each repair in its own short write transaction and bounded
# by `autonomous.maxRepairsPerRun` rows. `autonomous.frozen` (or `mutationsFrozen`) is a hard
# stop: the run still checks and reports, and lists every repair it did not make as skipped.
# Each run is recorded (store/health.py, migration 045) with every action and what it changed,
# and logged. The scheduled worker (workers/scheduled.py) runs it every
# `autonomous.intervalMs` when `autonomous.enabled`, in `autonomous.maintenanceMode`; `signet
# maintenance run [--execute]` and `POST /api/repair/run` run it by hand.

MIB = 1024 * 1024


def check_health(service: MemoryService, now: datetime) -> dict[str, dict[str, Any]]:
    """Every health check: name -> {ok, counts...}."""
    conn = service.store.reader()
    fts = health_sql.fts_counts(conn)
    stale_before = format_ts(now - timedelta(milliseconds=service.config.pipeline.lease_timeout_ms))
    jobs = health_sql.job_counts(conn, stale_before)
    graph = health_sql.graph_counts(conn)
    sources = health_sql.source_drift(conn)
    checks: dict[str, dict[str, Any]] = {
        "fts": {"ok": len(set(fts.values())) == 1, **fts},
        "jobs": {"ok": jobs["dead"] == 0 and jobs["stuck"] == 0, **jobs},
        "graph": {"ok": not any(graph.values()), **graph},
        "sources": {"ok": _sources_ok(sources), **sources},
        "storage": _storage(service),
    }
    if service.embedder is not None:
        audit = emb_sql.audit(conn, service.embedder.model)
        checks["embeddings"] = {"ok": audit["missing"] == 0, "model": service.embedder.model, **audit}
    return checks


def _sources_ok(s: dict[str, int]) -> bool:
    return (s["wrong_members"] == s["unindexed_sources"] == s["dirty"] == 0
            and s["index_rows"] == s["ranked_sources"])


def _storage(service: MemoryService) -> dict[str, Any]:
    db = Path(service.config.db_path)
    wal = db.with_name(db.name + "-wal")
    db_bytes = db.stat().st_size if db.exists() else 0
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    limit = service.config.pipeline.autonomous.wal_checkpoint_mb * MIB
    return {"ok": wal_bytes <= limit, "db_bytes": db_bytes, "wal_bytes": wal_bytes,
            "wal_limit_bytes": limit}


def run_maintenance(
    service: MemoryService, *, execute: bool = False, now: datetime | None = None,
    trigger: str = "manual",
) -> dict[str, Any]:
    """One run: check, repair what failed (execute mode, unless frozen), record, log. `now`
    defaults to the service's clock."""
    now = now or service.clock.now()
    auto = service.config.pipeline.autonomous
    frozen = auto.frozen or service.config.pipeline.mutations_frozen
    started = format_ts(now)
    before = check_health(service, now)
    failing = [name for name, check in before.items() if not check["ok"]]
    actions: list[dict[str, Any]] = []
    skipped: list[str] = []
    if execute:
        for name in failing:
            if frozen:
                skipped.append(name)
            elif (repair := _REPAIRS.get(name)) is not None:
                actions.extend(repair(service, before[name], now))
    after = check_health(service, now) if actions else before
    report = {
        "mode": "execute" if execute else "observe", "trigger": trigger, "frozen": frozen,
        "at": started, "ok": all(c["ok"] for c in after.values()), "problems": failing,
        "checks": before, "actions": actions, "skipped": skipped,
        "after": after if actions else None,
    }
    report["id"] = None
    if not service.config.pipeline.mutations_frozen:  # reads only: reported and logged, not stored
        with service.store.write_tx() as conn:
            report["id"] = health_sql.record_run(
                conn, started_at=started, finished_at=stamp(service.clock), mode=str(report["mode"]),
                trigger=trigger, report=report, actions=actions,
            )
    _log_run(report)
    return report


def _log_run(report: dict[str, Any]) -> None:
    if not report["problems"]:
        log.info("maintenance (%s): healthy", report["mode"])
        return
    done = ", ".join(a["action"] for a in report["actions"]) or "none"
    log.warning(
        "maintenance (%s%s): problems %s; repairs %s; skipped %s", report["mode"],
        ", frozen" if report["frozen"] else "", ", ".join(report["problems"]), done,
        ", ".join(report["skipped"]) or "none",
    )


def maintenance_report(
    service: MemoryService, now: datetime | None = None, *, runs: int = 5
) -> dict[str, Any]:
    """The configuration, the health now (read only, nothing recorded), recent runs and
    actions: what `/api/repair/report` answers."""
    now = now or service.clock.now()
    auto = service.config.pipeline.autonomous
    conn = service.store.reader()
    current = check_health(service, now)
    return {
        "enabled": auto.enabled, "mode": auto.maintenance_mode,
        "frozen": auto.frozen or service.config.pipeline.mutations_frozen,
        "interval_ms": auto.interval_ms,
        "ok": all(c["ok"] for c in current.values()),
        "problems": [name for name, c in current.items() if not c["ok"]],
        "checks": current,
        "runs": health_sql.latest_runs(conn, runs),
        "recent_actions": health_sql.recent_actions(conn, 50),
    }


def run_retention(
    service: MemoryService, *, dry_run: bool = False, now: datetime | None = None
) -> RetentionReport:
    """One retention sweep now (workers/retention_worker.py); `dry_run` only counts."""
    if not dry_run:
        service.check_mutable()
    return sweep(service.store, service.config.retention, now or service.clock.now(), dry_run=dry_run)


def app_status(service: MemoryService, guard: ProviderGuard | None) -> dict[str, Any]:
    """What `signet status` and `/api/status` report: the store, the embedder with the query
    embedding's circuit breaker (`guard`: "open" means recall runs without the semantic channel
    until the provider answers again), the pipeline and maintenance in brief."""
    conn, config, embedder = service.store.reader(), service.config, service.embedder
    return {
        "workspace": str(config.workspace),
        "database": str(config.db_path),
        "memories": mem_sql.count_live(conn),
        "embedder": (
            {"provider": embedder.name, "model": embedder.model,
             "dimensions": embedder.dimensions,
             "health": guard.snapshot() if guard else None}
            if embedder else None
        ),
        "degraded": ["embedder"] if guard and guard.degraded else [],
        "embeddings": emb_sql.audit(conn, embedder.model) if embedder else None,
        "pipeline": pipeline_brief(config),
        "maintenance": status_summary(service),
    }


def status_summary(service: MemoryService) -> dict[str, Any]:
    """For `signet status`: the settings and the last recorded run, in brief (no checks run)."""
    auto = service.config.pipeline.autonomous
    last = health_sql.latest_runs(service.store.reader(), 1)
    brief = None
    if last:
        r = last[0]["report"]
        brief = {"at": r["at"], "mode": r["mode"], "trigger": r["trigger"], "ok": r["ok"],
                 "problems": r["problems"], "actions": len(r["actions"]), "skipped": r["skipped"]}
    return {"enabled": auto.enabled, "mode": auto.maintenance_mode,
            "frozen": auto.frozen or service.config.pipeline.mutations_frozen, "last_run": brief}


# --- repairs: each (service, failing check, now) -> the actions taken ------------------------------


Repair = Callable[["MemoryService", dict[str, Any], datetime], list[dict[str, Any]]]


def _action(now: datetime, name: str, **changed: Any) -> dict[str, Any]:
    return {"at": format_ts(now), "action": name, "changed": changed}


def _repair_fts(service: MemoryService, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    with service.store.write_tx() as conn:
        fts_sql.rebuild(conn)
    counts = health_sql.fts_counts(service.store.reader())
    before = {k: v for k, v in check.items() if k != "ok"}
    return [_action(now, "rebuild_fts", tables=list(fts_sql.TABLES), before=before, after=counts)]


def _repair_jobs(service: MemoryService, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    at = format_ts(now)
    out = []
    if check["stuck"]:
        with service.store.write_tx() as conn:
            released = jobs_sql.reap_stale_leases(conn, at, service.config.pipeline.lease_timeout_ms)
        out.append(_action(now, "release_stale_leases", released=released))
    with service.store.write_tx() as conn:
        ids = health_sql.dead_jobs_never_requeued(conn, limit)
        requeued = jobs_sql.requeue_dead(conn, at, job_ids=ids) if ids else 0
        health_sql.mark_requeued(conn, ids, at)
    if ids:
        out.append(_action(now, "requeue_dead_jobs", requeued=requeued, job_ids=ids))
    return out


def _repair_embeddings(
    service: MemoryService, check: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    assert service.embedder is not None
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    at = format_ts(now)
    with service.store.write_tx() as conn:
        ids = emb_sql.missing_memory_ids(conn, service.embedder.model, limit)
        enqueued = sum(1 for i in ids if jobs_sql.enqueue(conn, "embed", memory_id=i, now=at))
    return [_action(now, "backfill_embeddings", missing=check["missing"], enqueued=enqueued,
                    model=service.embedder.model)]


def _repair_graph(service: MemoryService, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    out = []
    with service.store.write_tx() as conn:
        mentions = health_sql.delete_orphan_mentions(conn, limit) if check["orphan_mentions"] else 0
        entities = health_sql.delete_orphan_entities(conn, limit) if check["orphan_entities"] else []
    if mentions:
        out.append(_action(now, "delete_orphan_mentions", deleted=mentions))
    if entities:
        out.append(_action(now, "delete_orphan_entities", deleted=len(entities), entity_ids=entities))
    return out


def _repair_sources(service: MemoryService, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    with service.store.write_tx() as conn:  # the writer's flush at commit re-indexes them
        marked = health_sql.reindex_sources(conn)
    return [_action(now, "reindex_sources", sources=marked)]


def _repair_storage(service: MemoryService, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    service.store.checkpoint()
    after = _storage(service)["wal_bytes"]
    return [_action(now, "checkpoint_wal", wal_bytes_before=check["wal_bytes"], wal_bytes_after=after)]


_REPAIRS: dict[str, Repair] = {
    "fts": _repair_fts, "jobs": _repair_jobs, "embeddings": _repair_embeddings,
    "graph": _repair_graph, "sources": _repair_sources, "storage": _repair_storage,
}
