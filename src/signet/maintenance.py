"""Diagnostics and repair actions an operator runs on a live store (seed 002's repair actions).

- the pipeline's queue: depths per job type and status, the most recent failures;
- requeue dead jobs; release stale leases (leases older than `leaseTimeoutMs`, or a given age,
  whose worker vanished) — the reaper's job, on demand;
- the FTS consistency check (FTS5 'integrity-check' on both indexes, plus row counts) and a
  rebuild of both indexes from the memories table;
- re-embed: an embed job for every live memory that has no current vector of the configured
  model (the embed worker does the work in the background, outside any transaction);
- the embeddings audit, and a health probe: one tiny embedding call, timed.

Every function takes the opened app and returns plain JSON-ready data; writes go through
`store.write_tx()` and SQL stays in `signet.store`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from signet.errors import Conflict, InvalidInput, ProviderError
from signet.store import embeddings as emb_sql
from signet.store import fts as fts_sql
from signet.store import jobs as jobs_sql
from signet.types import utc_now

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = [
    "embeddings_health",
    "embeddings_status",
    "fts_check",
    "fts_rebuild",
    "pipeline_queue",
    "re_embed",
    "release_stale_leases",
]

MAX_REEMBED = 100_000
HEALTH_TEXT = "signet embedding health check"


def pipeline_queue(app: SignetApp, errors_limit: int = 10) -> dict[str, Any]:
    conn = app.store.reader()
    cfg = app.config.pipeline
    return {
        "enabled": cfg.enabled,
        "shadow_mode": cfg.shadow_mode,
        "mutations_frozen": cfg.mutations_frozen,
        "llm": {"provider": app.llm.name, "model": app.llm.model} if app.llm else None,
        "queue": jobs_sql.depths(conn),
        "last_errors": [
            {"id": j.id, "job_type": j.job_type, "status": j.status, "memory_id": j.memory_id,
             "attempts": j.attempts, "max_attempts": j.max_attempts, "error": j.error,
             "updated_at": j.updated_at}
            for j in jobs_sql.last_errors(conn, errors_limit)
        ],
    }


def release_stale_leases(app: SignetApp, older_than_ms: int | None = None) -> dict[str, Any]:
    """Leases older than `older_than_ms` (default: the configured lease timeout) go back to the
    queue, or dead on their last attempt; returns how many."""
    age = app.config.pipeline.lease_timeout_ms if older_than_ms is None else older_than_ms
    if age < 0:
        raise InvalidInput("older_than_ms must not be negative")
    with app.store.write_tx() as conn:
        released = jobs_sql.reap_stale_leases(conn, utc_now(), age)
    return {"released": released, "older_than_ms": age}


def fts_check(app: SignetApp) -> dict[str, Any]:
    conn = app.store.reader()
    # An external-content FTS5 table counts its content table's rows; the _docsize shadow
    # table holds one row per document the index really holds.
    counts = {"memories": int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])}
    for table in fts_sql.TABLES:
        counts[table] = int(conn.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0])
    consistent = fts_sql.integrity_check(conn)
    return {"ok": consistent and len(set(counts.values())) == 1, "integrity": consistent,
            "rows": counts}


def fts_rebuild(app: SignetApp) -> dict[str, Any]:
    app._check_mutable()
    started = time.perf_counter()
    with app.store.write_tx() as conn:
        fts_sql.rebuild(conn)
    took = round((time.perf_counter() - started) * 1000, 3)
    return {"rebuilt": list(fts_sql.TABLES), "ms": took, "check": fts_check(app)}


def re_embed(app: SignetApp, limit: int = MAX_REEMBED) -> dict[str, Any]:
    if app.embedder is None:
        raise Conflict("no embedding provider is configured (embedding.provider: none)",
                       code="no_embedder")
    app._check_mutable()
    now = utc_now()
    with app.store.write_tx() as conn:
        ids = emb_sql.missing_memory_ids(conn, app.embedder.model, max(1, limit))
        enqueued = sum(
            1 for memory_id in ids if jobs_sql.enqueue(conn, "embed", memory_id=memory_id, now=now)
        )
    return {"missing": len(ids), "enqueued": enqueued, "already_queued": len(ids) - enqueued,
            "model": app.embedder.model}


def embeddings_status(app: SignetApp) -> dict[str, Any]:
    conn = app.store.reader()
    embedder = app.embedder
    queue = jobs_sql.depths(conn).get("embed", {})
    return {
        "provider": embedder.name if embedder else "none",
        "model": embedder.model if embedder else None,
        "dimensions": embedder.dimensions if embedder else None,
        "audit": emb_sql.audit(conn, embedder.model) if embedder else None,
        "jobs": queue,
    }


def embeddings_health(app: SignetApp) -> dict[str, Any]:
    """One tiny embedding call, timed; `ok` false with the error code when it fails."""
    embedder = app.embedder
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
