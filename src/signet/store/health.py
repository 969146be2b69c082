"""The SQL of the maintenance worker (signet/maintenance.py): health counts, the repairs that
have no home elsewhere, and the record of runs and actions (migration 045).

Every count here is a cheap aggregate (an index or a shadow table), because the scheduled
worker runs them on a live daemon: no FTS integrity-check, no full-text scan.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.fts import TABLES as FTS_TABLES

__all__ = [
    "dead_jobs_never_requeued",
    "delete_orphan_entities",
    "delete_orphan_mentions",
    "fts_counts",
    "graph_counts",
    "job_counts",
    "latest_runs",
    "mark_requeued",
    "recent_actions",
    "record_run",
    "reindex_sources",
    "source_drift",
]

KEEP_RUNS = 200

# An entity nothing refers to: no mention, relation, aspect, dependency or pin.
ORPHAN_ENTITY = (
    "NOT EXISTS (SELECT 1 FROM memory_entity_mentions x WHERE x.entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.source_entity_id = e.id"
    " OR r.target_entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM entity_aspects a WHERE a.entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM entity_dependencies d WHERE d.source_entity_id = e.id"
    " OR d.target_entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM entity_pinning p WHERE p.entity_id = e.id)"
)
# A mention whose memory or entity row is gone (possible only if foreign keys were off).
ORPHAN_MENTION = (
    "NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.memory_id)"
    " OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = x.entity_id)"
)


def _one(conn: Executes, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


def fts_counts(conn: Connection) -> dict[str, int]:
    """Rows of the memories table and documents held by each full-text index (the _docsize
    shadow table has one row per indexed document)."""
    counts = {"memories": _one(conn, "SELECT count(*) FROM memories")}
    for table in FTS_TABLES:
        counts[table] = _one(conn, f"SELECT count(*) FROM {table}_docsize")
    return counts


def job_counts(conn: Executes, stale_before: str, dialect: Dialect = SQLITE) -> dict[str, int]:
    return {
        "dead": _one(conn, "SELECT count(*) FROM memory_jobs WHERE status = 'dead'"),
        "stuck": _one(conn, "SELECT count(*) FROM memory_jobs WHERE status = 'leased'"
                            f" AND leased_at < {dialect.mark}", (stale_before,)),
        "dead_requeued_before": _one(
            conn, "SELECT count(*) FROM memory_jobs j WHERE j.status = 'dead' AND EXISTS"
                  " (SELECT 1 FROM maintenance_requeues q WHERE q.job_id = j.id)"),
    }


def graph_counts(conn: Executes) -> dict[str, int]:
    """Orphan entities and mentions (the same statement on either backend)."""
    return {
        "orphan_entities": _one(conn, f"SELECT count(*) FROM entities e WHERE {ORPHAN_ENTITY}"),
        "orphan_mentions": _one(
            conn, f"SELECT count(*) FROM memory_entity_mentions x WHERE {ORPHAN_MENTION}"),
    }


def source_drift(conn: Connection) -> dict[str, int]:
    """Sources whose recorded member count differs from their live memories, sources with live
    members but no row, and rows left dirty after a commit (the writer flushes at commit)."""
    wrong = _one(
        conn,
        "SELECT count(*) FROM memory_sources s WHERE s.members != (SELECT count(*) FROM memories m"
        " WHERE m.source_id = s.source_id AND m.agent_id = s.agent_id AND m.project IS s.project"
        " AND m.is_deleted = 0)",
    )
    # A source is one (agent, project, source id) since migration 012.
    missing = _one(
        conn,
        "SELECT count(*) FROM (SELECT DISTINCT agent_id, project, source_id FROM memories m"
        " WHERE m.source_id IS NOT NULL AND m.is_deleted = 0 AND NOT EXISTS (SELECT 1 FROM"
        " memory_sources s WHERE s.agent_id = m.agent_id"
        " AND IFNULL(s.project, x'') = IFNULL(m.project, x'') AND s.source_id = m.source_id))",
    )
    indexed = _one(conn, "SELECT count(*) FROM memory_sources WHERE members >= 2")
    fts_rows = _one(conn, "SELECT count(*) FROM memory_sources_fts_docsize")
    dirty = _one(conn, "SELECT count(*) FROM memory_sources WHERE dirty = 1")
    return {"wrong_members": wrong, "unindexed_sources": missing, "dirty": dirty,
            "ranked_sources": indexed, "index_rows": fts_rows}


def reindex_sources(conn: Connection) -> int:
    """Mark every source dirty (adding rows for sources that have none); the writer's flush
    at commit re-indexes them all. Returns how many were marked."""
    conn.execute(
        "INSERT INTO memory_sources(agent_id, project, source_id)"
        " SELECT DISTINCT agent_id, project, source_id FROM memories WHERE source_id IS NOT NULL"
        " ON CONFLICT(agent_id, IFNULL(project, x''), source_id) DO UPDATE SET dirty = 1"
    )
    conn.execute("DELETE FROM memory_sources_fts")
    return conn.execute("UPDATE memory_sources SET dirty = 1").rowcount


def delete_orphan_mentions(conn: Connection, limit: int) -> int:
    return conn.execute(
        # By key: the table has no rowid (migration 051).
        "DELETE FROM memory_entity_mentions WHERE (memory_id, entity_id) IN"
        " (SELECT x.memory_id, x.entity_id FROM memory_entity_mentions x"
        f" WHERE {ORPHAN_MENTION} LIMIT ?)", (limit,),
    ).rowcount


def delete_orphan_entities(conn: Connection, limit: int) -> list[str]:
    ids = [r[0] for r in conn.execute(
        f"SELECT e.id FROM entities e WHERE {ORPHAN_ENTITY} ORDER BY e.created_at LIMIT ?",
        (limit,),
    ).fetchall()]
    conn.executemany("DELETE FROM entities WHERE id = ?", [(i,) for i in ids])
    return ids


def dead_jobs_never_requeued(conn: Connection, limit: int) -> list[str]:
    """Dead jobs maintenance has not requeued before: it requeues each job once, so a job
    that keeps failing stays dead for a person to look at."""
    return [r[0] for r in conn.execute(
        "SELECT j.id FROM memory_jobs j WHERE j.status = 'dead' AND NOT EXISTS"
        " (SELECT 1 FROM maintenance_requeues q WHERE q.job_id = j.id)"
        " ORDER BY j.failed_at LIMIT ?", (limit,),
    ).fetchall()]


def mark_requeued(conn: Connection, job_ids: list[str], now: str) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO maintenance_requeues(job_id, requeued_at) VALUES (?, ?)",
        [(job_id, now) for job_id in job_ids],
    )


def record_run(
    conn: Connection, *, started_at: str, finished_at: str, mode: str, trigger: str,
    report: dict[str, Any], actions: list[dict[str, Any]],
) -> str:
    """Store one run and its actions; keep the newest KEEP_RUNS runs."""
    run_id = "mnt_" + secrets.token_hex(8)
    conn.execute(
        "INSERT INTO maintenance_runs(id, started_at, finished_at, mode, trigger, report_json)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, started_at, finished_at, mode, trigger, json.dumps(report, sort_keys=True)),
    )
    conn.executemany(
        "INSERT INTO maintenance_actions(run_id, at, action, changed_json) VALUES (?, ?, ?, ?)",
        [(run_id, a["at"], a["action"], json.dumps(a["changed"], sort_keys=True)) for a in actions],
    )
    old = "SELECT id FROM maintenance_runs ORDER BY started_at DESC, rowid DESC LIMIT -1 OFFSET ?"
    conn.execute(f"DELETE FROM maintenance_actions WHERE run_id IN ({old})", (KEEP_RUNS,))
    conn.execute(f"DELETE FROM maintenance_runs WHERE id IN ({old})", (KEEP_RUNS,))
    return run_id


def latest_runs(conn: Executes, limit: int, dialect: Dialect = SQLITE) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, started_at, finished_at, mode, trigger, report_json FROM maintenance_runs"
        f" ORDER BY started_at DESC, {dialect.insertion_order} DESC LIMIT {dialect.mark}",
        (limit,),
    ).fetchall()
    return [{"id": r[0], "started_at": r[1], "finished_at": r[2], "mode": r[3], "trigger": r[4],
             "report": json.loads(r[5])} for r in rows]


def recent_actions(
    conn: Executes, limit: int, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT run_id, at, action, changed_json FROM maintenance_actions"
        f" ORDER BY id DESC LIMIT {dialect.mark}", (limit,),
    ).fetchall()
    return [{"run_id": r[0], "at": r[1], "action": r[2], "changed": json.loads(r[3])}
            for r in rows]
