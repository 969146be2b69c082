"""Diagnostics and repair actions an operator runs on a live store: queue depths, requeueing dead
jobs, releasing stale leases, the lexical index check and rebuild, re-embedding, the embeddings
audit and health probe, and the autonomous maintenance run. Every function takes `Operations`, so
it runs on both backends and returns JSON-ready data.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from signet.clock import stamp
from signet.errors import Conflict, InvalidInput, ProviderError
from signet.providers.guard import ProviderGuard
from signet.providers.llm import BaseLLM
from signet.services.operations import Operations
from signet.services.write_policy import pipeline_brief
from signet.types import format_ts
from signet.workers.retention_worker import RetentionReport, sweep

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


def pipeline_queue(service: Operations, errors_limit: int = 10) -> dict[str, Any]:
    """The pipeline's settings, its LLM, the queue's depths and the latest failures."""
    ops, llm = service.ops, service.llm
    cfg = service.config.pipeline
    return {
        "enabled": cfg.enabled,
        "shadow_mode": cfg.shadow_mode,
        "mutations_frozen": cfg.mutations_frozen,
        "llm": {"provider": llm.name, "model": llm.model} if llm else None,
        "queue": ops.job_depths(),
        "summary_queue": ops.summary_counts(),  # summary_jobs: status -> count
        "last_errors": [
            {"id": j.id, "job_type": j.job_type, "status": j.status, "memory_id": j.memory_id,
             "attempts": j.attempts, "max_attempts": j.max_attempts, "error": j.error,
             "updated_at": j.updated_at}
            for j in ops.last_errors(errors_limit)
        ],
    }


def release_stale_leases(service: Operations, older_than_ms: int | None = None) -> dict[str, Any]:
    """Leases older than `older_than_ms` (default: the configured lease timeout) go back to the
    queue, or dead on their last attempt; returns how many."""
    age = service.config.pipeline.lease_timeout_ms if older_than_ms is None else older_than_ms
    if age < 0:
        raise InvalidInput("older_than_ms must not be negative")
    released = service.ops.reap_stale_leases(stamp(service.clock), age)
    return {"released": released, "older_than_ms": age}


def fts_check(service: Operations) -> dict[str, Any]:
    """The full check of the lexical index (SQLite: FTS5 integrity-check and row counts of both
    indexes; PostgreSQL: the GIN index over the tsvector column valid, store/postgres/
    operations.py)."""
    return service.ops.lexical_check()


def fts_rebuild(service: Operations) -> dict[str, Any]:
    service.check_mutable()
    started = time.perf_counter()
    rebuilt = service.ops.lexical_rebuild()
    took = round((time.perf_counter() - started) * 1000, 3)
    return {"rebuilt": rebuilt, "ms": took, "check": fts_check(service)}


def re_embed(service: Operations, limit: int = MAX_REEMBED) -> dict[str, Any]:
    if service.embedder is None:
        raise Conflict("no embedding provider is configured (embedding.provider: none)",
                       code="no_embedder")
    service.check_mutable()
    missing, enqueued = service.ops.enqueue_missing_embeds(
        service.embedder.model, max(1, limit), stamp(service.clock))
    return {"missing": missing, "enqueued": enqueued, "already_queued": missing - enqueued,
            "model": service.embedder.model}


def embeddings_status(service: Operations) -> dict[str, Any]:
    embedder = service.embedder
    queue = service.ops.job_depths().get("embed", {})
    return {
        "provider": embedder.name if embedder else "none",
        "model": embedder.model if embedder else None,
        "dimensions": embedder.dimensions if embedder else None,
        "audit": service.ops.embedding_audit(embedder.model) if embedder else None,
        "jobs": queue,
    }


def embeddings_health(service: Operations) -> dict[str, Any]:
    """One tiny embedding call, timed; `ok` false with the error code when it fails. It waits
    through recall's guard, so a hung provider costs a caller the budget at most and counts
    toward the breaker."""
    embedder, probe, guard = service.embedder, service.probe, service.guard
    if embedder is None or probe is None:
        return {"ok": True, "provider": "none", "model": None, "latency_ms": None,
                "detail": "no embedding provider configured; recall is keyword-only"}
    base = {"provider": embedder.name, "model": embedder.model}
    started = time.perf_counter()
    try:
        probed = guard.wait(probe.submit) if guard is not None else probe.submit().result()
    except ProviderError as exc:
        return {**base, "ok": False, "latency_ms": _ms(started), "error": exc.code,
                "detail": exc.message}
    vectors = probed.vectors
    dims = int(vectors.shape[-1]) if vectors.ndim else 0
    ok = dims == embedder.dimensions
    return {**base, "ok": ok, "latency_ms": round(probed.latency_ms, 3), "dimensions": dims,
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


def check_health(service: Operations, now: datetime) -> dict[str, dict[str, Any]]:
    """Every health check this store backend has: name -> {ok, counts...} (a check whose
    tables are not on the backend, the graph's on PostgreSQL, is left out, not made up)."""
    ops = service.ops
    stale_before = format_ts(now - timedelta(milliseconds=service.config.pipeline.lease_timeout_ms))
    jobs = ops.job_counts(stale_before)
    checks: dict[str, dict[str, Any]] = {
        "fts": ops.lexical_counts(),
        "jobs": {"ok": jobs["dead"] == 0 and jobs["stuck"] == 0, **jobs},
    }
    if (graph := ops.graph_counts()) is not None:
        checks["graph"] = {"ok": not any(graph.values()), **graph}
    if (sources := ops.source_drift()) is not None:
        checks["sources"] = {"ok": _sources_ok(sources), **sources}
    checks["storage"] = _storage(service)
    if service.embedder is not None:
        audit = ops.embedding_audit(service.embedder.model)
        checks["embeddings"] = {"ok": audit["missing"] == 0, "model": service.embedder.model, **audit}
    return checks


def _sources_ok(s: dict[str, int]) -> bool:
    return (s["wrong_members"] == s["unindexed_sources"] == s["dirty"] == 0
            and s["index_rows"] == s["ranked_sources"])


def _storage(service: Operations) -> dict[str, Any]:
    return service.ops.storage(service.config.pipeline.autonomous.wal_checkpoint_mb * MIB)


def run_maintenance(
    service: Operations, *, execute: bool = False, now: datetime | None = None,
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
        report["id"] = service.ops.record_run(
            started_at=started, finished_at=stamp(service.clock), mode=str(report["mode"]),
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
    service: Operations, now: datetime | None = None, *, runs: int = 5
) -> dict[str, Any]:
    """The configuration, the health now (read only, nothing recorded), recent runs and
    actions: what `/api/repair/report` answers."""
    now = now or service.clock.now()
    auto = service.config.pipeline.autonomous
    current = check_health(service, now)
    return {
        "enabled": auto.enabled, "mode": auto.maintenance_mode,
        "frozen": auto.frozen or service.config.pipeline.mutations_frozen,
        "interval_ms": auto.interval_ms,
        "ok": all(c["ok"] for c in current.values()),
        "problems": [name for name, c in current.items() if not c["ok"]],
        "checks": current,
        "runs": service.ops.latest_runs(runs),
        "recent_actions": service.ops.recent_actions(50),
    }


def run_retention(
    service: Operations, *, dry_run: bool = False, now: datetime | None = None
) -> RetentionReport:
    """One retention sweep now (workers/retention_worker.py); `dry_run` only counts. On a
    shared store a sweep another daemon is running meanwhile is not run twice (`skipped`)."""
    if not dry_run:
        service.check_mutable()
    return sweep(service.ops, service.config.retention, now or service.clock.now(), dry_run=dry_run)


def app_status(
    service: Operations, guard: ProviderGuard | None, backend: str, database: str
) -> dict[str, Any]:
    """What `signet status` and `/api/status` report: the store (`backend`, and `database`:
    its file or its URL without password), the embedder with the query embedding's circuit
    breaker (`guard`: "open" means recall runs without the semantic channel until the
    provider answers again), the pipeline and maintenance in brief."""
    ops, config, embedder = service.ops, service.config, service.embedder
    return {
        "workspace": str(config.workspace),
        "backend": backend,
        "database": database,
        "memories": ops.count_live(),
        "embedder": (
            {"provider": embedder.name, "model": embedder.model,
             "dimensions": embedder.dimensions,
             # None: a model served elsewhere (ollama, an API), nothing to load here
             "loaded": getattr(embedder, "loaded", None),
             "health": guard.snapshot() if guard else None}
            if embedder else None
        ),
        "degraded": ["embedder"] if guard and guard.degraded else [],
        "embeddings": ops.embedding_audit(embedder.model) if embedder else None,
        "pipeline": pipeline_brief(config),
        "llm": llm_brief(service),
        "maintenance": status_summary(service),
    }


def llm_brief(service: Operations) -> dict[str, Any] | None:
    """The pipeline's LLM for `signet status`: provider, model and its last error, if any."""
    llm = service.llm
    if llm is None:
        return None
    health = llm.health() if isinstance(llm, BaseLLM) else {}
    return {"provider": llm.name, "model": llm.model, **health}


def status_summary(service: Operations) -> dict[str, Any]:
    """For `signet status`: the settings and the last recorded run, in brief (no checks run)."""
    auto = service.config.pipeline.autonomous
    last = service.ops.latest_runs(1)
    brief = None
    if last:
        r = last[0]["report"]
        brief = {"at": r["at"], "mode": r["mode"], "trigger": r["trigger"], "ok": r["ok"],
                 "problems": r["problems"], "actions": len(r["actions"]), "skipped": r["skipped"]}
    return {"enabled": auto.enabled, "mode": auto.maintenance_mode,
            "frozen": auto.frozen or service.config.pipeline.mutations_frozen, "last_run": brief}


# --- repairs: each (service, failing check, now) -> the actions taken ------------------------------


Repair = Callable[[Operations, dict[str, Any], datetime], list[dict[str, Any]]]


def _action(now: datetime, name: str, **changed: Any) -> dict[str, Any]:
    return {"at": format_ts(now), "action": name, "changed": changed}


def _repair_fts(service: Operations, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    rebuilt = service.ops.lexical_rebuild()
    counts = {k: v for k, v in service.ops.lexical_counts().items() if k != "ok"}
    before = {k: v for k, v in check.items() if k != "ok"}
    return [_action(now, "rebuild_fts", tables=rebuilt, before=before, after=counts)]


def _repair_jobs(service: Operations, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    at = format_ts(now)
    out = []
    if check["stuck"]:
        released = service.ops.reap_stale_leases(at, service.config.pipeline.lease_timeout_ms)
        out.append(_action(now, "release_stale_leases", released=released))
    ids, requeued = service.ops.requeue_dead_once(at, limit)
    if ids:
        out.append(_action(now, "requeue_dead_jobs", requeued=requeued, job_ids=ids))
    return out


def _repair_embeddings(
    service: Operations, check: dict[str, Any], now: datetime
) -> list[dict[str, Any]]:
    assert service.embedder is not None
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    _missing, enqueued = service.ops.enqueue_missing_embeds(
        service.embedder.model, limit, format_ts(now))
    return [_action(now, "backfill_embeddings", missing=check["missing"], enqueued=enqueued,
                    model=service.embedder.model)]


def _repair_graph(service: Operations, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    limit = service.config.pipeline.autonomous.max_repairs_per_run
    out = []
    mentions, entities = service.ops.delete_orphans(
        limit, mentions=bool(check["orphan_mentions"]), entities=bool(check["orphan_entities"]))
    if mentions:
        out.append(_action(now, "delete_orphan_mentions", deleted=mentions))
    if entities:
        out.append(_action(now, "delete_orphan_entities", deleted=len(entities), entity_ids=entities))
    return out


def _repair_sources(service: Operations, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    marked = service.ops.reindex_sources()
    return [_action(now, "reindex_sources", sources=marked)]


def _repair_storage(service: Operations, check: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    service.ops.checkpoint()
    after = _storage(service)["wal_bytes"]
    return [_action(now, "checkpoint_wal", wal_bytes_before=check["wal_bytes"], wal_bytes_after=after)]


_REPAIRS: dict[str, Repair] = {
    "fts": _repair_fts, "jobs": _repair_jobs, "embeddings": _repair_embeddings,
    "graph": _repair_graph, "sources": _repair_sources, "storage": _repair_storage,
}
