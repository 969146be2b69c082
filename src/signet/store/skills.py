"""The SQL of skills as procedural memory (signet/skills.py): `skill_meta` rows
and the one live `procedural` memory that indexes each skill
(source_type 'skill', source_id 'skill:<name>')."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes

__all__ = [
    "SOURCE_TYPE",
    "SkillMeta",
    "SkillMemory",
    "delete_meta",
    "get_meta",
    "list_meta",
    "record_use_for_memory",
    "set_importance",
    "skill_memory",
    "source_id",
    "upsert_meta",
]

SOURCE_TYPE = "skill"


@dataclass(frozen=True, slots=True)
class SkillMeta:
    skill_name: str
    agent_id: str
    decay_rate: float
    use_count: int
    last_used_at: str | None
    role_classification: str | None
    filesystem_path: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class SkillMemory:
    id: str
    content: str
    importance: float
    version: int


_COLUMNS = ("skill_name, agent_id, decay_rate, use_count, last_used_at, role_classification,"
            " filesystem_path, created_at, updated_at")


def source_id(name: str) -> str:
    return f"skill:{name}"


def list_meta(conn: Connection, agent_id: str) -> list[SkillMeta]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_meta WHERE agent_id = ? ORDER BY skill_name", (agent_id,)
    ).fetchall()
    return [SkillMeta(*row) for row in rows]


def get_meta(conn: Connection, name: str, agent_id: str) -> SkillMeta | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_meta WHERE skill_name = ? AND agent_id = ?",
        (name, agent_id),
    ).fetchone()
    return SkillMeta(*row) if row else None


def upsert_meta(
    conn: Connection, *, name: str, agent_id: str, path: str, role: str | None,
    decay_rate: float, now: str,
) -> None:
    conn.execute(
        "INSERT INTO skill_meta(id, skill_name, agent_id, decay_rate, role_classification,"
        " filesystem_path, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(skill_name, agent_id) DO UPDATE SET role_classification ="
        " excluded.role_classification, filesystem_path = excluded.filesystem_path,"
        " decay_rate = excluded.decay_rate, updated_at = excluded.updated_at"
        " WHERE role_classification IS NOT excluded.role_classification"
        " OR filesystem_path IS NOT excluded.filesystem_path OR decay_rate != excluded.decay_rate",
        ("skm_" + secrets.token_hex(8), name, agent_id, decay_rate, role, path, now, now),
    )


def delete_meta(
    conn: Executes, name: str, agent_id: str, dialect: Dialect = SQLITE
) -> bool:
    return bool(conn.execute(
        dialect.sql("DELETE FROM skill_meta WHERE skill_name = ? AND agent_id = ?"),
        (name, agent_id),
    ).rowcount > 0)


def skill_memory(conn: Connection, name: str, agent_id: str) -> SkillMemory | None:
    row = conn.execute(
        "SELECT id, content, importance, version FROM memories WHERE source_type = ?"
        " AND source_id = ? AND agent_id = ? AND is_deleted = 0 ORDER BY created_at LIMIT 1",
        (SOURCE_TYPE, source_id(name), agent_id),
    ).fetchone()
    return SkillMemory(row[0], row[1], float(row[2]), int(row[3])) if row else None


def set_importance(
    conn: Executes, memory_id: str, importance: float, dialect: Dialect = SQLITE
) -> None:
    """Decay moves a skill memory's importance, which recall folds into its ranking; the row
    is otherwise untouched (no new version: decay is not an edit)."""
    conn.execute(dialect.sql("UPDATE memories SET importance = ? WHERE id = ?"),
                 (importance, memory_id))


def record_use_for_memory(
    conn: Executes, memory_id: str, now: str, dialect: Dialect = SQLITE
) -> str | None:
    """If `memory_id` indexes a skill, count a use of it; returns the skill's name."""
    row = conn.execute(dialect.sql(
        "SELECT source_id, agent_id FROM memories WHERE id = ? AND source_type = ?"),
        (memory_id, SOURCE_TYPE),
    ).fetchone()
    if row is None or not str(row[0]).startswith("skill:"):
        return None
    name = str(row[0])[len("skill:"):]
    changed = conn.execute(dialect.sql(
        "UPDATE skill_meta SET use_count = use_count + 1, last_used_at = ?, updated_at = ?"
        " WHERE skill_name = ? AND agent_id = ?"), (now, now, name, row[1]),
    ).rowcount
    return name if changed else None
