"""PostgresLedger: the recall QA ledger's LedgerStore (store/search_telemetry.py) on PostgreSQL.

The table is migration 005's (created for every database; rows are written only while the
ledger is switched on, services/search_ledger.py). The statements are store/search_telemetry.py's
in this dialect: JSON columns as text, `no_hits` a boolean here.
"""

from __future__ import annotations

from typing import Any

from psycopg.rows import dict_row

from signet.store import search_telemetry
from signet.store.dialect import POSTGRES
from signet.store.postgres.core import PostgresCore

__all__ = ["PostgresLedger"]


class PostgresLedger:
    backend = "postgres"

    def __init__(self, core: PostgresCore) -> None:
        self.core = core

    def ensure(self) -> None:
        return None  # migration 005 made the table

    def record(self, entry: dict[str, Any], now: str) -> str:
        with self.core._conn() as conn:
            return search_telemetry.record(conn, entry, now, POSTGRES)

    def list_rows(
        self, *, agent_id: str | None, project: str | None, since: str | None,
        no_hits: bool | None, limit: int, offset: int,
    ) -> tuple[list[dict[str, Any]], int]:
        with self.core._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            return search_telemetry.list_rows(
                cur, agent_id=agent_id, project=project, since=since, no_hits=no_hits,
                limit=limit, offset=offset, dialect=POSTGRES)
