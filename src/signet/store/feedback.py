"""SQL for agent feedback on memories (agent_feedback, migration 001).

An agent that used a recalled memory says whether it helped: `positive`, `negative`, or a
`correction` with the text it should have said. The rows are evidence for later quality work
(ranking, review); writing one changes no memory. Writes run inside `Store.write_tx()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.memories import new_id


@dataclass(frozen=True, slots=True)
class Feedback:
    id: str
    memory_id: str
    session_id: str | None
    feedback_type: str
    correction_text: str | None
    actor: str | None
    agent_id: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


_COLUMNS = (
    "id, memory_id, session_id, feedback_type, correction_text, actor, agent_id, created_at"
)


def add(
    conn: Executes,
    *,
    memory_id: str,
    feedback_type: str,
    correction_text: str | None,
    session_id: str | None,
    actor: str | None,
    agent_id: str,
    now: str,
    dialect: Dialect = SQLITE,
) -> Feedback:
    """Record one piece of feedback and return it as stored."""
    row = conn.execute(dialect.sql(
        f"INSERT INTO agent_feedback ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?) RETURNING {_COLUMNS}"),
        (new_id(), memory_id, session_id, feedback_type, correction_text, actor, agent_id, now),
    ).fetchone()
    return Feedback(*row)


def for_memory(conn: Executes, memory_id: str, dialect: Dialect = SQLITE) -> list[Feedback]:
    """Every piece of feedback on one memory, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM agent_feedback WHERE memory_id = {dialect.mark}"
        f" ORDER BY created_at, {dialect.insertion_order}",
        (memory_id,),
    ).fetchall()
    return [Feedback(*row) for row in rows]
