"""SQL for memory_artifacts (the index over the markdown lineage) and its tombstones. Every column
comes from an artifact file's front matter, so re-indexing the files restores the table; a
tombstone (agent, session_token) keeps a session removed for privacy from coming back, even when
a copy of its file reappears.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet.store.connection import Row
from signet.store.dialect import SQLITE, Dialect, Executes

FIELDS = (
    "agent_id", "source_path", "source_sha256", "source_kind", "session_id", "session_key",
    "session_token", "project", "harness", "captured_at", "started_at", "ended_at",
    "memory_sentence", "content", "updated_at", "artifact_id", "thread_key", "condenses",
    "parent_path",
)


@dataclass(frozen=True, slots=True)
class ArtifactRow:
    agent_id: str
    source_path: str
    source_sha256: str
    source_kind: str
    session_id: str | None
    session_key: str | None
    session_token: str | None
    project: str | None
    harness: str | None
    captured_at: str | None
    started_at: str | None
    ended_at: str | None
    memory_sentence: str | None
    content: str
    updated_at: str
    artifact_id: str | None
    thread_key: str | None
    condenses: tuple[str, ...]
    parent_path: str | None

    def to_dict(self, *, with_content: bool = True) -> dict[str, Any]:
        data = {n: getattr(self, n) for n in FIELDS}
        data["condenses"] = list(self.condenses)
        if not with_content:
            data.pop("content")
        return data


_COLUMNS = ", ".join(FIELDS)


def _row(row: Row) -> ArtifactRow:
    values = {n: row[n] for n in FIELDS}
    values["condenses"] = tuple(json.loads(values["condenses"] or "[]"))
    return ArtifactRow(**values)


# Every statement below runs on both backends, rendered in the caller's dialect; rows are read
# by column name (on PostgreSQL through a dict_row cursor).


def upsert(conn: Executes, row: ArtifactRow, dialect: Dialect = SQLITE) -> None:
    values = [getattr(row, n) for n in FIELDS]
    values[FIELDS.index("condenses")] = json.dumps(list(row.condenses))
    marks = ",".join([dialect.mark] * len(FIELDS))
    updates = ", ".join(f"{n} = excluded.{n}" for n in FIELDS if n not in ("agent_id", "source_path"))
    conn.execute(
        f"INSERT INTO memory_artifacts ({_COLUMNS}) VALUES ({marks})"
        f" ON CONFLICT(agent_id, source_path) DO UPDATE SET {updates}",
        values,
    )


def set_parent(
    conn: Executes, agent_id: str, paths: list[str], parent: str, dialect: Dialect = SQLITE
) -> None:
    if paths:
        which, args = dialect.one_of("source_path", paths)
        q = dialect.mark
        conn.execute(f"UPDATE memory_artifacts SET parent_path = {q} WHERE agent_id = {q}"
                     f" AND {which}", (parent, agent_id, *args))


def _select(
    conn: Executes, where: str, args: tuple[Any, ...], dialect: Dialect, order: str = ""
) -> list[ArtifactRow]:
    rows = conn.execute(dialect.sql(f"SELECT {_COLUMNS} FROM memory_artifacts WHERE {where}{order}"),
                        args).fetchall()
    return [_row(r) for r in rows]


def get(
    conn: Executes, agent_id: str, path: str, dialect: Dialect = SQLITE
) -> ArtifactRow | None:
    found = _select(conn, "agent_id = ? AND source_path = ?", (agent_id, path), dialect)
    return found[0] if found else None


def by_id(conn: Executes, artifact_id: str, dialect: Dialect = SQLITE) -> ArtifactRow | None:
    found = _select(conn, "artifact_id = ?", (artifact_id,), dialect, " LIMIT 1")
    return found[0] if found else None


def of_session(conn: Executes, session_key: str, dialect: Dialect = SQLITE) -> list[ArtifactRow]:
    return _select(conn, "session_key = ?", (session_key,), dialect, " ORDER BY source_path")


def in_thread(
    conn: Executes, agent_id: str, thread_key: str, kind: str, *, uncondensed: bool = False,
    dialect: Dialect = SQLITE,
) -> list[ArtifactRow]:
    """A thread's artifacts of one kind, oldest first (by start time, then path)."""
    extra = " AND parent_path IS NULL" if uncondensed else ""
    return _select(conn, f"agent_id = ? AND thread_key = ? AND source_kind = ?{extra}",
                   (agent_id, thread_key, kind), dialect,
                   " ORDER BY COALESCE(started_at, captured_at), source_path")


def threads(
    conn: Executes, agent_id: str | None, project: str | None, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    text, q = dialect.text_mark, dialect.mark
    rows = conn.execute(
        "SELECT agent_id, thread_key, project, source_kind, COUNT(*) AS n,"
        " MAX(COALESCE(ended_at, captured_at)) AS last FROM memory_artifacts"
        f" WHERE thread_key IS NOT NULL AND ({text} IS NULL OR agent_id = {q})"
        f" AND ({text} IS NULL OR project = {q})"
        " GROUP BY agent_id, thread_key, project, source_kind",
        (agent_id, agent_id, project, project),
    ).fetchall()
    return thread_items(rows)


def thread_items(rows: Any) -> list[dict[str, Any]]:
    """The threads, newest first, from (agent_id, thread_key, project, source_kind, n, last)
    rows (each backend's `threads` query): one item per (agent, thread) with its counts."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        item = out.setdefault((r["agent_id"], r["thread_key"]), {
            "agent_id": r["agent_id"], "thread": r["thread_key"], "project": r["project"],
            "summaries": 0, "arcs": 0, "epochs": 0, "last": None})
        item[{"summary": "summaries", "arc": "arcs", "epoch": "epochs"}[r["source_kind"]]] = r["n"]
        item["last"] = max(filter(None, (item["last"], r["last"])), default=None)
    return sorted(out.values(), key=lambda t: t["last"] or "", reverse=True)


def all_paths(conn: Executes) -> list[tuple[str, str]]:
    rows = conn.execute("SELECT agent_id, source_path FROM memory_artifacts").fetchall()
    return [(r["agent_id"], r["source_path"]) for r in rows]


def delete(
    conn: Executes, agent_id: str, paths: Sequence[str], dialect: Dialect = SQLITE
) -> None:
    if paths:
        which, args = dialect.one_of("source_path", paths)
        conn.execute(f"DELETE FROM memory_artifacts WHERE agent_id = {dialect.mark} AND {which}",
                     (agent_id, *args))


# -- tombstones -------------------------------------------------------------------------------


def tombstone(conn: Executes, agent_id: str, token: str, paths: list[str], reason: str | None,
              now: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql(
        "INSERT INTO memory_artifact_tombstones (agent_id, session_token, removed_at, reason,"
        " removed_paths) VALUES (?,?,?,?,?) ON CONFLICT(agent_id, session_token) DO UPDATE SET"
        " removed_at = excluded.removed_at, removed_paths = excluded.removed_paths"),
        (agent_id, token, now, reason, json.dumps(paths)),
    )


def tombstoned(conn: Executes) -> set[tuple[str, str]]:
    rows = conn.execute("SELECT agent_id, session_token FROM memory_artifact_tombstones").fetchall()
    return {(str(r["agent_id"]), str(r["session_token"])) for r in rows}
