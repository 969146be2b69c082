"""The operator's store seam on PostgreSQL. The lexical indexes are GIN indexes over generated
`tsvector` columns, which cannot drift: the check is that they are valid and ready (plus
`gin_index_check` with `amcheck`), the repair a `REINDEX`. A dead job is requeued once across
daemons (its `maintenance_requeues` row claimed first). Source ranking is not on this backend.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from signet.store import embeddings as emb_sql
from signet.store import health as health_sql
from signet.store.dialect import POSTGRES
from signet.store.health import KEEP_RUNS
from signet.store.jobs import Job, _ts
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres.retention import PostgresRetention
from signet.store.prefixes import MAX_LISTED, resolve_with

__all__ = ["LEXICAL_INDEXES", "PostgresOps"]

# The GIN indexes of the memories' tsvector columns (001_core.sql, 003_pipeline.sql), each
# with the statement that creates it: the twins of SQLite's two FTS5 tables.
LEXICAL_INDEXES = {
    "memories_lexical": "CREATE INDEX IF NOT EXISTS memories_lexical ON memories USING gin (lexical)",
    "memories_hint_lexical": "CREATE INDEX IF NOT EXISTS memories_hint_lexical"
                             " ON memories USING gin (hint_lexical)",
}


class PostgresOps(PostgresRetention):
    backend = "postgres"

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    # -- JobAdmin -------------------------------------------------------------------------------
    def list_jobs(
        self, *, status: str | None, job_type: str | None, limit: int, offset: int
    ) -> list[Job]:
        with self._conn() as conn:
            return pg_jobs.list_jobs(conn, status=status, job_type=job_type, limit=limit,
                                     offset=offset)

    def find_job(self, ref: str) -> Job | None:
        with self._conn() as conn:
            return pg_jobs.get(conn, self._resolve(conn, ref))

    def _resolve(self, conn: psycopg.Connection, ref: str) -> str:
        return resolve_with(
            lambda prefix: pg_jobs.ids_with_prefix(conn, prefix, MAX_LISTED + 1), ref, "job")

    def job_depths(self) -> dict[str, dict[str, int]]:
        with self._conn() as conn:
            return pg_jobs.depths(conn)

    def requeue_dead(self, now: str, job_ids: Sequence[str] | None = None) -> int:
        with self._tx() as conn:
            if job_ids is not None:
                job_ids = [self._resolve(conn, j) for j in job_ids]
            return pg_jobs.requeue_dead(conn, now, job_ids=job_ids)

    def last_errors(self, limit: int) -> list[Job]:
        with self._conn() as conn:
            return pg_jobs.last_errors(conn, limit)

    def summary_counts(self) -> dict[str, int]:
        with self._conn() as conn:  # 004_sessions.sql
            rows = conn.execute("SELECT status, count(*) FROM summary_jobs GROUP BY status")
            return {str(s): int(n) for s, n in rows.fetchall()}

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int:
        with self._conn() as conn:
            return pg_jobs.reap_stale_leases(conn, now, lease_timeout_ms)

    def release_leases(self, now: str, held: Sequence[tuple[str, str]] | None = None) -> int:
        with self._conn() as conn:
            return pg_jobs.release_leases(conn, now, held)

    # -- RepairStore ----------------------------------------------------------------------------
    def count_live(self) -> int:
        with self._conn() as conn:
            return _one(conn, "SELECT count(*) FROM memories WHERE NOT is_deleted")

    def lexical_counts(self) -> dict[str, Any]:
        with self._conn() as conn:
            valid = {name: _index_state(conn, name)["valid"] for name in LEXICAL_INDEXES}
            return {"ok": all(valid.values()),
                    "memories": _one(conn, "SELECT count(*) FROM memories"),
                    **{f"{name}_valid": ok for name, ok in valid.items()}}

    def lexical_check(self) -> dict[str, Any]:
        indexes = {}
        with self._conn() as conn:
            for name in LEXICAL_INDEXES:
                state = _index_state(conn, name)
                checked = _amcheck(conn, name) if state["valid"] else None
                indexes[name] = {**state, "amcheck": "not installed" if checked is None else checked}
            rows = {"memories": _one(conn, "SELECT count(*) FROM memories"),
                    "lexical": _one(conn, "SELECT count(*) FROM memories WHERE lexical IS NOT NULL")}
        integrity = all(i["valid"] and i["amcheck"] is not False for i in indexes.values())
        return {"ok": integrity and len(set(rows.values())) == 1, "integrity": integrity,
                "rows": rows, "indexes": indexes}

    def lexical_rebuild(self) -> list[str]:
        with self._conn() as conn:
            for name, create in LEXICAL_INDEXES.items():
                conn.execute(f"REINDEX INDEX {name}" if _index_state(conn, name)["exists"]
                             else create)
        return list(LEXICAL_INDEXES)

    def embedding_audit(self, model: str) -> dict[str, int]:
        with self._conn() as conn:
            live = _one(conn, "SELECT count(DISTINCT content_hash) FROM memories WHERE NOT is_deleted")
            current = _one(
                conn, "SELECT count(*) FROM embeddings e WHERE e.model = %s AND NOT e.stale AND"
                " EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = e.content_hash"
                " AND NOT m.is_deleted)", (model,))
            stale = _one(conn, "SELECT count(*) FROM embeddings WHERE stale")
            total = _one(conn, "SELECT count(*) FROM embeddings")
        return {"memories": live, "embedded": current, "missing": live - current,
                "stale": stale, "vectors": total}

    def enqueue_missing_embeds(self, model: str, limit: int, now: str) -> tuple[int, int]:
        with self._tx() as conn:
            ids = emb_sql.missing_memory_ids(conn, model, limit, POSTGRES)
            enqueued = sum(1 for i in ids if pg_jobs.enqueue(conn, "embed", memory_id=i, now=now))
        return len(ids), enqueued

    def job_counts(self, stale_before: str) -> dict[str, int]:
        with self._conn() as conn:
            return health_sql.job_counts(conn, _ts(stale_before), POSTGRES)

    def graph_counts(self) -> dict[str, int] | None:
        with self._conn() as conn:
            return health_sql.graph_counts(conn)

    def source_drift(self) -> dict[str, int] | None:
        return None  # source ranking (memory_sources) is not on this backend

    def storage(self, wal_limit_bytes: int) -> dict[str, Any]:
        with self._conn() as conn:
            size = _one(conn, "SELECT pg_database_size(current_database())")
        return {"ok": True, "db_bytes": size, "wal": "the PostgreSQL server's own"}

    def checkpoint(self) -> None:
        return None  # the server checkpoints its own WAL

    def requeue_dead_once(self, now: str, limit: int) -> tuple[list[str], int]:
        now = _ts(now)
        with self._tx() as conn:
            # The claim first: a job another daemon's run claimed is not requeued twice.
            ids = [str(r[0]) for r in conn.execute(
                "INSERT INTO maintenance_requeues (job_id, requeued_at) SELECT j.id, %s FROM"
                " memory_jobs j WHERE j.status = 'dead' AND NOT EXISTS (SELECT 1 FROM"
                " maintenance_requeues q WHERE q.job_id = j.id) ORDER BY j.failed_at LIMIT %s"
                " ON CONFLICT DO NOTHING RETURNING job_id", (now, limit)).fetchall()]
            requeued = pg_jobs.requeue_dead(conn, now, job_ids=ids) if ids else 0
        return ids, requeued

    def delete_orphans(self, limit: int, *, mentions: bool, entities: bool) -> tuple[int, list[str]]:
        gone, ids = 0, []
        with self._tx() as conn:
            if mentions:  # foreign keys hold here, so there are none to find; asked all the same
                gone = conn.execute(
                    "DELETE FROM memory_entity_mentions WHERE (memory_id, entity_id) IN (SELECT"
                    f" x.memory_id, x.entity_id FROM memory_entity_mentions x WHERE"
                    f" {health_sql.ORPHAN_MENTION} LIMIT %s)", (limit,)).rowcount
            if entities:
                ids = [str(r[0]) for r in conn.execute(
                    "DELETE FROM entities WHERE id IN (SELECT e.id FROM entities e WHERE"
                    f" {health_sql.ORPHAN_ENTITY} ORDER BY e.created_at LIMIT %s) RETURNING id",
                    (limit,)).fetchall()]
        return gone, sorted(ids)

    def reindex_sources(self) -> int:
        return 0  # no source index here (source_drift is None, so no run asks)

    def record_run(
        self, *, started_at: str, finished_at: str, mode: str, trigger: str,
        report: dict[str, Any], actions: list[dict[str, Any]],
    ) -> str:
        run_id = "mnt_" + secrets.token_hex(8)
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO maintenance_runs (id, started_at, finished_at, mode, trigger,"
                " report_json) VALUES (%s, %s, %s, %s, %s, %s)",
                (run_id, started_at, finished_at, mode, trigger, json.dumps(report, sort_keys=True)),
            )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO maintenance_actions (run_id, at, action, changed_json)"
                    " VALUES (%s, %s, %s, %s)",
                    [(run_id, a["at"], a["action"], json.dumps(a["changed"], sort_keys=True))
                     for a in actions],
                )
            old = ("SELECT id FROM maintenance_runs ORDER BY started_at DESC, seq DESC"
                   " OFFSET %s")
            conn.execute(f"DELETE FROM maintenance_actions WHERE run_id IN ({old})", (KEEP_RUNS,))
            conn.execute(f"DELETE FROM maintenance_runs WHERE id IN ({old})", (KEEP_RUNS,))
        return run_id

def _one(conn: psycopg.Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _index_state(conn: psycopg.Connection, name: str) -> dict[str, bool]:
    row = conn.execute(
        "SELECT i.indisvalid, i.indisready FROM pg_index i"
        " WHERE i.indexrelid = to_regclass(%s)", (name,),
    ).fetchone()
    if row is None:
        return {"exists": False, "valid": False}
    return {"exists": True, "valid": bool(row[0] and row[1])}


def _amcheck(conn: psycopg.Connection, name: str) -> bool | None:
    """amcheck's GIN check (PostgreSQL 18) when the extension is installed, else None."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'amcheck'").fetchone() is None:
        return None
    try:
        with conn.transaction():
            conn.execute("SELECT gin_index_check(%s::regclass)", (name,))
    except psycopg.errors.UndefinedFunction:
        return None
    except psycopg.Error:
        return False
    return True
