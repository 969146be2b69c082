"""SQL for the recall QA ledger, memory_search_telemetry. On SQLite the table exists only when
`memory.pipelineV2.telemetry.memorySearchQaEnabled` is on (`ensure` runs
`migrations/optional_search_telemetry.sql`, which the migration runner never applies). A row
holds a recall's query, filters, timings and a snapshot of its results, which is memory content,
so it is read only through the analytics-guarded routes, filtered by scope in SQL. `LedgerStore`
is the seam, `Ledger` it on both backends (on PostgreSQL the table is migration 005's, JSON
columns as text, `no_hits` a boolean).
"""

from __future__ import annotations

import json
import uuid
from importlib import resources
from typing import Any, Protocol

from signet.store.connection import Connection, Row
from signet.store.dialect import SQLITE, Database, Dialect, Executes
from signet.types import dumps

TABLE = "memory_search_telemetry"
SCOPE_INDEX = "idx_memory_search_telemetry_scope"  # made when rows began to carry the scope
SNAPSHOT_CHARS = 200  # of each result's content kept in results_json
COLUMNS = (
    "id", "created_at", "route", "agent_id", "session_key", "project", "query", "keyword_query",
    "filters_json", "method", "result_count", "top_score", "no_hits", "duration_ms",
    "timings_json", "results_json", "sources_json",
)


def ensure(conn: Connection) -> None:
    """Create the table and its indexes if missing (call inside write_tx). A table made before
    rows carried the asking token's scope (it lacks SCOPE_INDEX) has its rows relabelled as
    unscoped, once: they carried the asker's agent, `default` for the install token and for
    project-scoped tokens, so a token scoped to agent `default` read other scopes' queries."""
    if exists(conn) and conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (SCOPE_INDEX,)
    ).fetchone() is None:
        conn.execute(f"UPDATE {TABLE} SET agent_id = '', project = NULL")
    sql = resources.files("signet.store").joinpath("migrations/optional_search_telemetry.sql")
    text = "\n".join(
        line for line in sql.read_text("utf-8").splitlines() if not line.startswith("--")
    )
    # One statement at a time: executescript would commit the caller's transaction first.
    for statement in filter(None, (part.strip() for part in text.split(";"))):
        conn.execute(statement)
    conn.execute(f"CREATE INDEX IF NOT EXISTS {SCOPE_INDEX} ON {TABLE}(agent_id, project)")


def exists(conn: Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    return row is not None


def record(
    conn: Executes, entry: dict[str, Any], now: str, dialect: Dialect = SQLITE
) -> str:
    """Insert one ledger row from `entry` (keys of COLUMNS; *_json values as Python data)."""
    row_id = uuid.uuid4().hex
    values = {**entry, "id": row_id, "created_at": now}
    for name in ("filters_json", "timings_json", "results_json", "sources_json"):
        if values.get(name) is not None and not isinstance(values[name], str):
            values[name] = dumps(values[name])
    values["no_hits"] = dialect.flag(bool(values.get("no_hits")))
    names = [c for c in COLUMNS if c in values]
    conn.execute(
        f"INSERT INTO {TABLE} ({', '.join(names)})"
        f" VALUES ({', '.join([dialect.mark] * len(names))})",
        [values[n] for n in names],
    )
    return row_id


def list_rows(
    conn: Executes,
    *,
    agent_id: str | None = None,
    project: str | None = None,
    since: str | None = None,
    no_hits: bool | None = None,
    limit: int = 100,
    offset: int = 0,
    dialect: Dialect = SQLITE,
) -> tuple[list[dict[str, Any]], int]:
    """Rows newest first, scoped to an agent and project when given; and the total (rows
    read by column name: on PostgreSQL through a dict_row cursor)."""
    clauses, params = _where(agent_id=agent_id, project=project, since=since, no_hits=no_hits,
                             dialect=dialect)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    total = conn.execute(
        dialect.sql(f"SELECT count(*) AS n FROM {TABLE} {where}"), params).fetchone()["n"]
    rows = conn.execute(dialect.sql(
        f"SELECT * FROM {TABLE} {where} ORDER BY created_at DESC,"
        f" {dialect.insertion_order} DESC LIMIT ? OFFSET ?"),
        [*params, max(limit, 0), max(offset, 0)],
    ).fetchall()
    return [_row(r) for r in rows], int(total)


def _where(
    *, agent_id: str | None, project: str | None, since: str | None, no_hits: bool | None,
    dialect: Dialect,
) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("agent_id", agent_id), ("project", project)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if since is not None:
        clauses.append("created_at >= ?")
        params.append(since)
    if no_hits is not None:
        clauses.append("no_hits = ?")
        params.append(dialect.flag(no_hits))
    return clauses, params


def _row(row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in COLUMNS:
        value = row[name]
        if name.endswith("_json"):
            out[name[: -len("_json")]] = json.loads(value) if value else None
        elif name == "no_hits":
            out[name] = bool(value)
        else:
            out[name] = value
    return out


class LedgerStore(Protocol):
    backend: str

    def ensure(self) -> None:
        """The table, created if missing (when the ledger is switched on)."""
        ...

    def record(self, entry: dict[str, Any], now: str) -> str:
        """Insert one row from `entry` (keys of COLUMNS; *_json values as Python data)."""
        ...

    def list_rows(
        self, *, agent_id: str | None, project: str | None, since: str | None,
        no_hits: bool | None, limit: int, offset: int,
    ) -> tuple[list[dict[str, Any]], int]:
        """Rows newest first, restricted to an agent and project when given; and the total."""
        ...


class Ledger:
    """LedgerStore on either backend: this module's statements in the core's dialect."""

    def __init__(self, core: Database) -> None:
        self.core, self.backend = core, core.backend

    def ensure(self) -> None:
        if self.core.dialect is SQLITE:  # PostgreSQL's migration 005 made the table
            with self.core.transaction() as conn:
                ensure(conn)

    def record(self, entry: dict[str, Any], now: str) -> str:
        with self.core.transaction() as conn:
            return record(conn, entry, now, self.core.dialect)

    def list_rows(
        self, *, agent_id: str | None, project: str | None, since: str | None,
        no_hits: bool | None, limit: int, offset: int,
    ) -> tuple[list[dict[str, Any]], int]:
        with self.core.reading() as conn:
            return list_rows(conn, agent_id=agent_id, project=project, since=since,
                             no_hits=no_hits, limit=limit, offset=offset, dialect=self.core.dialect)
