"""The DocumentStore (store/document_store.py) on PostgreSQL.

The statements are the SQLite side's in this dialect. Several daemons share the tables, so
what SQLite's one writer gave for free is explicit: registration holds an advisory lock on the
source (two daemons syncing one file find one document); a worker's every step holds its
job's row (`FOR UPDATE`) while it checks the lease is still its own; a forgotten chunk's row
is held while it is deleted.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from signet.store.dialect import Executes
from signet.store.document_store import SharedDocuments
from signet.store.documents import NewDocument
from signet.store.postgres import jobs as pg_jobs
from signet.store.postgres.core import PostgresCore
from signet.types import Memory, dumps

__all__ = ["PostgresDocuments"]


class PostgresDocuments(SharedDocuments):
    core: PostgresCore

    def _rows(self, conn: psycopg.Connection) -> Executes:
        return conn.cursor(row_factory=dict_row)

    def _memory(self, conn: Any, memory_id: str, *, lock: bool = False) -> Memory | None:
        return self.core._get(conn, memory_id, None, lock=lock)

    def _lock_source(self, conn: Any, new: NewDocument) -> None:
        # A local file is one source whoever registers it: held by its path.
        path = new.source_url if new.source_type == "file" else None
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                     (dumps([new.agent_id, new.project, path or new.source_key]),))

    def _enqueue(self, conn: Any, doc_id: str, now: str, max_attempts: int) -> None:
        pg_jobs.enqueue(conn, "document_ingest", now=now, document_id=doc_id,
                        max_attempts=max_attempts)
