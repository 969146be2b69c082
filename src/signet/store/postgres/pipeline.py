"""The pipeline's store seam on PostgreSQL. `write()` is `PostgresCore.transaction()` bound to the
worker's thread, so the memory service's insert joins it. Jobs are leased `FOR UPDATE SKIP
LOCKED`; the job's end and its writes commit together (`complete_job` answers False once the
lease is lost, and the raise rolls back); a target memory is re-read `FOR UPDATE` before it
changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row

from signet.store import review as review_sql
from signet.store.dialect import POSTGRES
from signet.store.jobs import Job
from signet.store.pipeline import CorePipeline, PipelineTx, SqlitePipelineTx
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres import vectors as pg_vectors
from signet.store.postgres.core import PostgresCore
from signet.store.postgres.graph import PostgresGraphOps
from signet.store.review import ReviewItem
from signet.types import Memory

__all__ = ["PostgresPipeline", "PostgresPipelineTx"]

# The memories columns the pipeline may change, by name (never spliced from input).
_UPDATABLE = frozenset({"content", "normalized_content", "content_hash", "hints", "superseded_by"})


class PostgresPipelineTx(SqlitePipelineTx):
    """PipelineTx on one PostgreSQL connection inside its transaction: the shared statements
    (store/pipeline.py) in this dialect, and what PostgreSQL does its own way: rows locked as
    they are read, the queue's own enqueue and release, pgvector, the graph's statements."""

    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection, core: PostgresCore) -> None:
        # The shared statements run on `self.conn` (typed as SQLite's: they take either
        # driver's connection); this class's own on `self.pg`.
        super().__init__(conn)  # type: ignore[arg-type]
        self.pg = conn
        self.core = core

    def get_memory(self, memory_id: str) -> Memory | None:
        return self.core._get(self.pg, memory_id, None, lock=True)

    def get_job(self, job_id: str) -> Job | None:
        return pg_jobs.get(self.pg, job_id)

    def release_job(self, job_id: str, now: str) -> None:
        pg_jobs.release(self.pg, job_id, now)

    def enqueue(self, job_type: str, memory_id: str, now: str, *, max_attempts: int) -> None:
        pg_jobs.enqueue(self.pg, job_type, memory_id=memory_id, now=now,
                        max_attempts=max_attempts)

    def update_columns(self, memory_id: str, columns: dict[str, Any], now: str) -> None:
        unknown = set(columns) - _UPDATABLE
        if unknown:
            raise ValueError(f"the pipeline does not change {sorted(unknown)}")
        super().update_columns(memory_id, columns, now)

    def store_vector(
        self, content_hash: str, vector: np.ndarray, *, model: str, now: str, memory_id: str
    ) -> None:
        self.core._upsert_vector(self.pg, content_hash, vector, model, now, memory_id)

    def relink(self, memory_id: str, agent_id: str, content: str, now: str) -> None:
        graph = PostgresGraphOps(self.pg)
        graph.unlink_memory(memory_id)
        graph.link_known_entities(memory_id, agent_id, content, now)

    def get_review(self, item_id: str) -> ReviewItem | None:
        with self.pg.cursor(row_factory=dict_row) as cur:
            return review_sql.get(cur, item_id, POSTGRES)


class PostgresPipeline(CorePipeline):
    """PipelineStore on PostgreSQL (module docstring)."""

    backend = "postgres"
    core: PostgresCore

    def vector_for(self, content_hash: str, model: str) -> np.ndarray | None:
        with self.core._conn() as conn:
            row = conn.execute(
                "SELECT vector::text FROM embeddings WHERE content_hash = %s AND model = %s"
                " AND NOT stale", (content_hash, model),
            ).fetchone()
        if row is None:
            return None
        return pg_vectors.parse(str(row[0]))

    @contextmanager
    def write(self) -> Iterator[PipelineTx]:
        with self.core.transaction() as conn:
            yield PostgresPipelineTx(conn, self.core)
