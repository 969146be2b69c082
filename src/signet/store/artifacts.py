"""SQL for memory_artifacts (the index over the markdown lineage) and its tombstones.

The table is derived: every column comes from an artifact file's front matter, so deleting the
rows and re-indexing the files restores it (sessions/artifacts service). A tombstone
(agent, session_token) marks a session removed for privacy; re-indexing never brings back an
artifact of a tombstoned session, even when a copy of its file reappears. The session token is
the session's key (store/sessions.py).

Lineage columns (migration 030): `thread_key` (the topic), `condenses` (JSON list of the source
paths an arc or epoch condenses) and `parent_path` (the arc or epoch that condensed this one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from signet.store.connection import Connection, Row

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


def upsert(conn: Connection, row: ArtifactRow) -> None:
    values = [getattr(row, n) for n in FIELDS]
    values[FIELDS.index("condenses")] = json.dumps(list(row.condenses))
    marks = ",".join("?" * len(FIELDS))
    updates = ", ".join(f"{n} = excluded.{n}" for n in FIELDS if n not in ("agent_id", "source_path"))
    conn.execute(
        f"INSERT INTO memory_artifacts ({_COLUMNS}) VALUES ({marks})"
        f" ON CONFLICT(agent_id, source_path) DO UPDATE SET {updates}",
        values,
    )


def set_parent(conn: Connection, agent_id: str, paths: list[str], parent: str) -> None:
    conn.executemany(
        "UPDATE memory_artifacts SET parent_path = ? WHERE agent_id = ? AND source_path = ?",
        [(parent, agent_id, p) for p in paths],
    )


def get(conn: Connection, agent_id: str, path: str) -> ArtifactRow | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_artifacts WHERE agent_id = ? AND source_path = ?",
        (agent_id, path),
    ).fetchone()
    return _row(row) if row else None


def by_id(conn: Connection, artifact_id: str) -> ArtifactRow | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_artifacts WHERE artifact_id = ?", (artifact_id,)
    ).fetchone()
    return _row(row) if row else None


def of_session(conn: Connection, session_key: str) -> list[ArtifactRow]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_artifacts WHERE session_key = ? ORDER BY source_path",
        (session_key,),
    ).fetchall()
    return [_row(r) for r in rows]


def in_thread(
    conn: Connection, agent_id: str, thread_key: str, kind: str, *, uncondensed: bool = False
) -> list[ArtifactRow]:
    """A thread's artifacts of one kind, oldest first (by start time, then path)."""
    extra = " AND parent_path IS NULL" if uncondensed else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_artifacts WHERE agent_id = ? AND thread_key = ?"
        f" AND source_kind = ?{extra} ORDER BY COALESCE(started_at, captured_at), source_path",
        (agent_id, thread_key, kind),
    ).fetchall()
    return [_row(r) for r in rows]


def threads(conn: Connection, agent_id: str | None, project: str | None) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT agent_id, thread_key, project, source_kind, COUNT(*) AS n,"
        " MAX(COALESCE(ended_at, captured_at)) AS last FROM memory_artifacts"
        " WHERE thread_key IS NOT NULL AND (? IS NULL OR agent_id = ?) AND (? IS NULL OR project = ?)"
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


def all_paths(conn: Connection) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in conn.execute("SELECT agent_id, source_path FROM memory_artifacts")]


def delete(conn: Connection, agent_id: str, path: str) -> None:
    conn.execute(
        "DELETE FROM memory_artifacts WHERE agent_id = ? AND source_path = ?", (agent_id, path)
    )


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM memory_artifacts").fetchone()[0])


def latest_summaries(conn: Connection, agent_id: str, limit: int) -> list[ArtifactRow]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memory_artifacts WHERE agent_id = ? AND source_kind = 'summary'"
        " ORDER BY COALESCE(ended_at, captured_at) DESC LIMIT ?",
        (agent_id, limit),
    ).fetchall()
    return [_row(r) for r in rows]


# -- tombstones -------------------------------------------------------------------------------


def tombstone(conn: Connection, agent_id: str, token: str, paths: list[str], reason: str | None,
              now: str) -> None:
    conn.execute(
        "INSERT INTO memory_artifact_tombstones (agent_id, session_token, removed_at, reason,"
        " removed_paths) VALUES (?,?,?,?,?) ON CONFLICT(agent_id, session_token) DO UPDATE SET"
        " removed_at = excluded.removed_at, removed_paths = excluded.removed_paths",
        (agent_id, token, now, reason, json.dumps(paths)),
    )


def tombstoned(conn: Connection) -> set[tuple[str, str]]:
    rows = conn.execute("SELECT agent_id, session_token FROM memory_artifact_tombstones")
    return {(r[0], r[1]) for r in rows}
