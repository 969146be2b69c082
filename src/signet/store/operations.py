"""The operator's store seam: `JobAdmin` (list, count, requeue jobs; release leases), `RepairStore`
(the lexical index check and rebuild, the embeddings audit, health counts, maintenance runs) and
`RetentionStore` (the sweep's steps, and `exclusive`: one sweep at a time across daemons).
`SqliteOps` is here, `PostgresOps` in store/postgres/operations.py. A check a backend lacks
answers None and is named as not on the backend, never a made-up count.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

from signet.store import embeddings as emb_sql
from signet.store import fts as fts_sql
from signet.store import health as health_sql
from signet.store import jobs as jobs_sql
from signet.store import knowledge as know_sql
from signet.store import memories as mem_sql
from signet.store import retention as ret_sql
from signet.store import sessions as sessions_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.jobs import Job
from signet.store.prefixes import resolve_prefix

__all__ = [
    "JobAdmin", "OpsStore", "RepairStore", "RetentionStore", "SharedOps", "SqliteOps",
]


class JobAdmin(Protocol):
    backend: str

    def list_jobs(
        self, *, status: str | None, job_type: str | None, limit: int, offset: int
    ) -> list[Job]: ...

    def find_job(self, ref: str) -> Job | None:
        """The job with this id or unique short id (NotFound / ambiguous_id as resolve_prefix)."""
        ...

    def job_depths(self) -> dict[str, dict[str, int]]: ...

    def requeue_dead(self, now: str, job_ids: Sequence[str] | None = None) -> int:
        """Dead jobs (all, or these ids or short ids) back to pending, in one transaction."""
        ...

    def last_errors(self, limit: int) -> list[Job]: ...

    def summary_counts(self) -> dict[str, int]:
        """Session-summary jobs per status ({} where that queue is not on this backend)."""
        ...

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int: ...

    def release_leases(self, now: str, held: Sequence[tuple[str, str]] | None = None) -> int:
        """Leased jobs back to pending with their attempt given back (a shutdown is no
        failure): all of them (None: the one daemon of a SQLite workspace), or the given
        (job id, leased_at) pairs, a daemon's own leases, still held at that lease."""
        ...


class RepairStore(Protocol):
    backend: str

    def count_live(self) -> int: ...

    def lexical_check(self) -> dict[str, Any]:
        """The full check of the lexical index: {ok, integrity, rows, ...} (slow on a big store)."""
        ...

    def lexical_counts(self) -> dict[str, Any]:
        """The cheap health check of the lexical index: {ok, counts...}."""
        ...

    def lexical_rebuild(self) -> list[str]:
        """Rebuild the lexical index from the memories; returns what was rebuilt."""
        ...

    def embedding_audit(self, model: str) -> dict[str, int]: ...

    def enqueue_missing_embeds(self, model: str, limit: int, now: str) -> tuple[int, int]:
        """An embed job for each live memory (at most `limit`) with no current vector of
        `model`, in one transaction; returns (missing found, jobs enqueued)."""
        ...

    def job_counts(self, stale_before: str) -> dict[str, int]: ...

    def graph_counts(self) -> dict[str, int] | None: ...

    def source_drift(self) -> dict[str, int] | None: ...

    def storage(self, wal_limit_bytes: int) -> dict[str, Any]: ...

    def checkpoint(self) -> None: ...

    def requeue_dead_once(self, now: str, limit: int) -> tuple[list[str], int]:
        """Dead jobs maintenance never requeued (at most `limit`), requeued and marked so in
        one transaction; returns (their ids, how many were requeued)."""
        ...

    def delete_orphans(self, limit: int, *, mentions: bool, entities: bool) -> tuple[int, list[str]]:
        ...

    def reindex_sources(self) -> int: ...

    def record_run(
        self, *, started_at: str, finished_at: str, mode: str, trigger: str,
        report: dict[str, Any], actions: list[dict[str, Any]],
    ) -> str: ...

    def latest_runs(self, limit: int) -> list[dict[str, Any]]: ...

    def recent_actions(self, limit: int) -> list[dict[str, Any]]: ...


class RetentionStore(Protocol):
    backend: str

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        """Hold the store-wide lock `name` for the block: True when this process holds it,
        False when another holds it (the caller skips its run)."""
        ...

    def expired_tombstones(self, before: str, limit: int) -> list[str]: ...

    def purge_graph_links(self, ids: Sequence[str], before: str) -> dict[str, int] | None:
        """Step 1: {links, orphans}, or None where the graph is not on this backend."""
        ...

    def purge_tombstone_vectors(self, ids: Sequence[str], before: str) -> int: ...

    def delete_tombstones(self, ids: Sequence[str], before: str) -> int: ...

    def purge_jobs(
        self, now: str, *, completed_before: str, dead_before: str, limit: int
    ) -> tuple[int, int]: ...

    def delete_older(self, kind: str, before: str, limit: int) -> int | None:
        """A plain time window (store/retention.py kinds); None where its table is not here."""
        ...

    def count_mention_links(self, ids: Sequence[str]) -> int | None: ...

    def count_tombstone_vectors(self, ids: Sequence[str], before: str) -> int: ...

    def count_older(self, kind: str, before: str, limit: int) -> int | None: ...

    def count_jobs(self, status: str, before: str, limit: int) -> int: ...


class OpsStore(JobAdmin, RepairStore, RetentionStore, Protocol):
    """All three, as each backend implements them in one class."""


class SharedOps:
    """What OpsStore runs the same on both backends: the store/ functions in the backend's
    dialect, over a connection outside any transaction (`_conn`) or a transaction (`_tx`)."""

    dialect: Dialect

    def _conn(self) -> AbstractContextManager[Executes]:
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[Executes]:
        raise NotImplementedError

    def latest_runs(self, limit: int) -> list[dict[str, Any]]:
        with self._conn() as conn:
            return health_sql.latest_runs(conn, limit, self.dialect)

    def recent_actions(self, limit: int) -> list[dict[str, Any]]:
        with self._conn() as conn:
            return health_sql.recent_actions(conn, limit, self.dialect)

    # -- RetentionStore's steps ------------------------------------------------------------------
    def expired_tombstones(self, before: str, limit: int) -> list[str]:
        with self._conn() as conn:
            return ret_sql.expired_tombstones(conn, before, limit, self.dialect)

    def purge_tombstone_vectors(self, ids: Sequence[str], before: str) -> int:
        with self._tx() as conn:
            hashes = ret_sql.tombstone_vector_hashes(conn, ids, before, self.dialect)
            return emb_sql.delete_for_hashes(conn, hashes, self.dialect)

    def delete_tombstones(self, ids: Sequence[str], before: str) -> int:
        with self._tx() as conn:
            return ret_sql.delete_tombstones(conn, ids, before, self.dialect)

    def count_mention_links(self, ids: Sequence[str]) -> int | None:
        with self._conn() as conn:
            return ret_sql.count_mention_links(conn, ids, self.dialect)

    def count_tombstone_vectors(self, ids: Sequence[str], before: str) -> int:
        with self._conn() as conn:
            return len(ret_sql.tombstone_vector_hashes(conn, ids, before, self.dialect))

    def count_jobs(self, status: str, before: str, limit: int) -> int:
        with self._conn() as conn:
            return ret_sql.count_jobs(conn, status, before, limit, self.dialect)


class SqliteOps(SharedOps):
    """The three protocols on the SQLite store: the store/ functions."""

    backend, dialect = "sqlite", SQLITE

    def __init__(self, store: Store) -> None:
        self.store = store

    def _conn(self) -> AbstractContextManager[Connection]:
        return nullcontext(self.store.reader())

    def _tx(self) -> AbstractContextManager[Connection]:
        return self.store.write_tx()

    # -- JobAdmin -------------------------------------------------------------------------------
    def list_jobs(
        self, *, status: str | None, job_type: str | None, limit: int, offset: int
    ) -> list[Job]:
        return jobs_sql.list_jobs(self.store.reader(), status=status, job_type=job_type,
                                  limit=limit, offset=offset)

    def find_job(self, ref: str) -> Job | None:
        conn = self.store.reader()
        return jobs_sql.get(conn, resolve_prefix(conn, "memory_jobs", ref, noun="job"))

    def job_depths(self) -> dict[str, dict[str, int]]:
        return jobs_sql.depths(self.store.reader())

    def requeue_dead(self, now: str, job_ids: Sequence[str] | None = None) -> int:
        with self.store.write_tx() as conn:
            if job_ids is not None:
                job_ids = [resolve_prefix(conn, "memory_jobs", j, noun="job") for j in job_ids]
            return jobs_sql.requeue_dead(conn, now, job_ids=job_ids)

    def last_errors(self, limit: int) -> list[Job]:
        return jobs_sql.last_errors(self.store.reader(), limit)

    def summary_counts(self) -> dict[str, int]:
        return sessions_sql.summary_counts(self.store.reader())

    def reap_stale_leases(self, now: str, lease_timeout_ms: int) -> int:
        with self.store.write_tx() as conn:
            return jobs_sql.reap_stale_leases(conn, now, lease_timeout_ms)

    def release_leases(self, now: str, held: Sequence[tuple[str, str]] | None = None) -> int:
        with self.store.write_tx() as conn:
            if held is None:
                return jobs_sql.release_leases(conn, now)
            released = 0
            for job_id, leased_at in held:
                job = jobs_sql.get(conn, job_id)
                if job is not None and job.status == "leased" and job.leased_at == leased_at:
                    released += jobs_sql.release_leases(conn, now, job_ids=[job_id])
            return released

    # -- RepairStore ----------------------------------------------------------------------------
    def count_live(self) -> int:
        return mem_sql.count_live(self.store.reader())

    def lexical_check(self) -> dict[str, Any]:
        conn = self.store.reader()
        # An external-content FTS5 table counts its content table's rows; the _docsize shadow
        # table holds one row per document the index really holds.
        counts = health_sql.fts_counts(conn)
        consistent = fts_sql.integrity_check(conn)
        return {"ok": consistent and len(set(counts.values())) == 1, "integrity": consistent,
                "rows": counts}

    def lexical_counts(self) -> dict[str, Any]:
        counts = health_sql.fts_counts(self.store.reader())
        return {"ok": len(set(counts.values())) == 1, **counts}

    def lexical_rebuild(self) -> list[str]:
        with self.store.write_tx() as conn:
            fts_sql.rebuild(conn)
        return list(fts_sql.TABLES)

    def embedding_audit(self, model: str) -> dict[str, int]:
        return emb_sql.audit(self.store.reader(), model)

    def enqueue_missing_embeds(self, model: str, limit: int, now: str) -> tuple[int, int]:
        with self.store.write_tx() as conn:
            ids = emb_sql.missing_memory_ids(conn, model, limit)
            enqueued = sum(1 for i in ids if jobs_sql.enqueue(conn, "embed", memory_id=i, now=now))
        return len(ids), enqueued

    def job_counts(self, stale_before: str) -> dict[str, int]:
        return health_sql.job_counts(self.store.reader(), stale_before)

    def graph_counts(self) -> dict[str, int] | None:
        return health_sql.graph_counts(self.store.reader())

    def source_drift(self) -> dict[str, int] | None:
        return health_sql.source_drift(self.store.reader())

    def storage(self, wal_limit_bytes: int) -> dict[str, Any]:
        db = Path(self.store.path)
        wal = db.with_name(db.name + "-wal")
        db_bytes = db.stat().st_size if db.exists() else 0
        wal_bytes = wal.stat().st_size if wal.exists() else 0
        return {"ok": wal_bytes <= wal_limit_bytes, "db_bytes": db_bytes, "wal_bytes": wal_bytes,
                "wal_limit_bytes": wal_limit_bytes}

    def checkpoint(self) -> None:
        self.store.checkpoint()

    def requeue_dead_once(self, now: str, limit: int) -> tuple[list[str], int]:
        with self.store.write_tx() as conn:
            ids = health_sql.dead_jobs_never_requeued(conn, limit)
            requeued = jobs_sql.requeue_dead(conn, now, job_ids=ids) if ids else 0
            health_sql.mark_requeued(conn, ids, now)
        return ids, requeued

    def delete_orphans(self, limit: int, *, mentions: bool, entities: bool) -> tuple[int, list[str]]:
        with self.store.write_tx() as conn:
            gone = health_sql.delete_orphan_mentions(conn, limit) if mentions else 0
            ids = health_sql.delete_orphan_entities(conn, limit) if entities else []
        return gone, ids

    def reindex_sources(self) -> int:
        with self.store.write_tx() as conn:  # the writer's flush at commit re-indexes them
            return health_sql.reindex_sources(conn)

    def record_run(
        self, *, started_at: str, finished_at: str, mode: str, trigger: str,
        report: dict[str, Any], actions: list[dict[str, Any]],
    ) -> str:
        with self.store.write_tx() as conn:
            return health_sql.record_run(conn, started_at=started_at, finished_at=finished_at,
                                         mode=mode, trigger=trigger, report=report,
                                         actions=actions)

    # -- RetentionStore -------------------------------------------------------------------------
    @contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        # One daemon per workspace (its pid lock) and one writer: each step's own transaction
        # and its expiry re-check are enough; nothing else to hold.
        yield True

    def purge_graph_links(self, ids: Sequence[str], before: str) -> dict[str, int] | None:
        with self.store.write_tx() as conn:
            live_ids = ret_sql.still_expired(conn, ids, before)
            return know_sql.decrement_entity_mentions(conn, live_ids)

    def purge_jobs(
        self, now: str, *, completed_before: str, dead_before: str, limit: int
    ) -> tuple[int, int]:
        with self.store.write_tx() as conn:  # one statement each
            return jobs_sql.purge(conn, now, completed_before=completed_before,
                                  dead_before=dead_before, limit=limit)

    def delete_older(self, kind: str, before: str, limit: int) -> int | None:
        with self.store.write_tx() as conn:
            return ret_sql.delete_older(conn, kind, before, limit)

    def count_older(self, kind: str, before: str, limit: int) -> int | None:
        return ret_sql.count_older(self.store.reader(), kind, before, limit)
