"""PgLedger: the recall QA ledger's LedgerStore (store/search_telemetry.py) on PostgreSQL.

The table is migration 005's (created for every database; rows are written only while the
ledger is switched on, services/search_ledger.py). The same rows as on SQLite: JSON columns as
text, read back through the same row mapping; `no_hits` is a boolean here. A caller's scope is
the statement's WHERE, as on SQLite.
"""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.rows import dict_row

from signet.store.postgres.core import PgCore
from signet.store.search_telemetry import COLUMNS, TABLE, _row
from signet.types import dumps

__all__ = ["PgLedger"]


class PgLedger:
    backend = "postgres"

    def __init__(self, core: PgCore) -> None:
        self.core = core

    def ensure(self) -> None:
        return None  # migration 005 made the table

    def record(self, entry: dict[str, Any], now: str) -> str:
        row_id = uuid.uuid4().hex
        values = {**entry, "id": row_id, "created_at": now}
        for name in ("filters_json", "timings_json", "results_json", "sources_json"):
            if values.get(name) is not None and not isinstance(values[name], str):
                values[name] = dumps(values[name])
        values["no_hits"] = bool(values.get("no_hits"))
        names = [c for c in COLUMNS if c in values]
        with self.core._conn() as conn:
            conn.execute(
                f"INSERT INTO {TABLE} ({', '.join(names)})"
                f" VALUES ({', '.join(['%s'] * len(names))})",
                [values[n] for n in names],
            )
        return row_id

    def list_rows(
        self, *, agent_id: str | None, project: str | None, since: str | None,
        no_hits: bool | None, limit: int, offset: int,
    ) -> tuple[list[dict[str, Any]], int]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (("agent_id", agent_id), ("project", project),
                              ("no_hits", no_hits)):
            if value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        if since is not None:
            clauses.append("created_at >= %s")
            params.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self.core._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            total = cur.execute(f"SELECT count(*) AS n FROM {TABLE} {where}", params).fetchone()
            rows = cur.execute(
                f"SELECT * FROM {TABLE} {where} ORDER BY created_at DESC, seq DESC"
                " LIMIT %s OFFSET %s", [*params, max(limit, 0), max(offset, 0)],
            ).fetchall()
        return [_row(r) for r in rows], int(total["n"]) if total else 0  # type: ignore[arg-type]
