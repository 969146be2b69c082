"""SQL for the global head (MEMORY.md, sessions/synthesis.py): the memories, projects and
entities it is rendered from, and when memory last changed (synthesis runs after idle gaps)."""

from __future__ import annotations

from typing import Any

from signet.store.dialect import SQLITE, Dialect, Executes

CANDIDATES = 500


# Every statement here runs on both backends, rendered in the caller's dialect; rows are read
# by column name (on PostgreSQL through a dict_row cursor).


def memories(conn: Executes, agent_id: str, dialect: Dialect = SQLITE) -> list[dict[str, Any]]:
    """Live memories worth a place in the head, the likeliest first (decay is applied after)."""
    rows = conn.execute(dialect.sql(
        "SELECT id, content, type, importance, pinned, project, created_at, last_accessed"
        f" FROM memories WHERE agent_id = ? AND {dialect.no('is_deleted')}"
        " AND type NOT IN ('document_chunk', 'summary') AND superseded_by IS NULL"
        " ORDER BY pinned DESC, importance DESC, COALESCE(last_accessed, created_at) DESC LIMIT ?"),
        (agent_id, CANDIDATES),
    ).fetchall()
    return [dict(r) for r in rows]


def projects(
    conn: Executes, agent_id: str, since: str, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    """Projects with a session or a memory since `since`: sessions, memories, last activity."""
    rows = conn.execute(dialect.sql(
        "SELECT project, CAST(SUM(sessions) AS INTEGER) AS sessions,"
        " CAST(SUM(memories) AS INTEGER) AS memories, MAX(last) AS last"
        " FROM (SELECT project, COUNT(*) AS sessions, 0 AS memories,"
        " MAX(COALESCE(last_event_at, created_at)) AS last FROM session_transcripts"
        " WHERE agent_id = ? AND project IS NOT NULL GROUP BY project"
        " UNION ALL SELECT project, 0, COUNT(*), MAX(updated_at) FROM memories"
        f" WHERE agent_id = ? AND {dialect.no('is_deleted')} AND project IS NOT NULL"
        " GROUP BY project) AS p"
        " GROUP BY project HAVING MAX(last) >= ? ORDER BY MAX(last) DESC LIMIT 20"),
        (agent_id, agent_id, since),
    ).fetchall()
    return [dict(r) for r in rows]


def latest_gists(
    conn: Executes, agent_id: str, dialect: Dialect = SQLITE
) -> dict[str | None, str]:
    """Per project, the memory sentence of its newest summary, arc or epoch (rows by column
    name: on PostgreSQL through a dict_row cursor)."""
    rows = conn.execute(dialect.sql(
        "SELECT project, memory_sentence FROM memory_artifacts WHERE agent_id = ?"
        " AND memory_sentence IS NOT NULL ORDER BY COALESCE(ended_at, captured_at)"),
        (agent_id,),
    ).fetchall()
    return {r["project"]: r["memory_sentence"] for r in rows}


def open_questions(conn: Executes, agent_id: str, limit: int = 3,
                   dialect: Dialect = SQLITE) -> list[str]:
    """The "Open questions" bullets of the newest session summaries."""
    return questions_in(latest_summaries(conn, agent_id, limit, dialect))


def latest_summaries(conn: Executes, agent_id: str, limit: int = 3,
                     dialect: Dialect = SQLITE) -> list[str]:
    """The markdown of the newest session summaries, newest first."""
    rows = conn.execute(dialect.sql(
        "SELECT content FROM memory_artifacts WHERE agent_id = ? AND source_kind = 'summary'"
        " ORDER BY COALESCE(ended_at, captured_at) DESC LIMIT ?"),
        (agent_id, limit),
    ).fetchall()
    return [str(row["content"]) for row in rows]


def questions_in(summaries: list[str]) -> list[str]:
    """The bullets under "## Open questions" in each summary's markdown, in order."""
    return section_items(summaries, "Open questions")


def section_items(summaries: list[str], section: str) -> list[str]:
    """The bullets under "## <section>" in each summary's markdown, in order."""
    found: list[str] = []
    for text in summaries:
        inside = False
        for line in text.splitlines():
            if line.startswith("## "):
                inside = line.strip() == f"## {section}"
            elif inside and line.startswith("- "):
                found.append(line[2:].strip())
    return found


# An entity named only by replaced memories (superseded_by set) is not current: left out.
CURRENT_ENTITY = (
    "(NOT EXISTS (SELECT 1 FROM memory_entity_mentions mm JOIN memories m ON m.id = mm.memory_id"
    " WHERE mm.entity_id = entities.id AND m.superseded_by IS NOT NULL)"
    " OR EXISTS (SELECT 1 FROM memory_entity_mentions mm JOIN memories m ON m.id = mm.memory_id"
    " WHERE mm.entity_id = entities.id AND m.superseded_by IS NULL))"
)


def entities(
    conn: Executes, agent_id: str, limit: int = 30, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    rows = conn.execute(dialect.sql(
        "SELECT name, entity_type, mentions FROM entities WHERE agent_id = ?"
        f" AND canonical_name <> 'user' AND mentions > 0 AND {CURRENT_ENTITY}"
        " ORDER BY mentions DESC, name LIMIT ?"),
        (agent_id, limit),
    ).fetchall()
    return [dict(r) for r in rows]


def last_change(conn: Executes) -> str | None:
    """The newest write the head depends on (a memory, an artifact), or None."""
    row = conn.execute(
        "SELECT MAX(t) AS t FROM (SELECT MAX(updated_at) AS t FROM memories"
        " UNION ALL SELECT MAX(updated_at) FROM memory_artifacts) AS c"
    ).fetchone()
    return row["t"] if row else None
