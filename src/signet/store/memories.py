"""SQL for the memories table: insert with dedup, read, filter, update, soft delete, recover. Every
function takes its connection, so callers decide the transaction. Dedup rests on the unique
partial index over (content_hash, agent, project) among live rows: a hit returns the existing id.
It is per scope, so a caller never learns through dedup that content exists elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from signet.ids import new_id
from signet.store.connection import Connection, IntegrityError, Row
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import Memory, MemoryFilters, NewMemory, dumps

COLUMNS = (
    "id, content, type, category, content_hash, normalized_content, confidence, importance, "
    "source_id, source_type, tags, who, why, project, agent_id, session_id, created_at, "
    "updated_at, event_at, is_deleted, deleted_at, extraction_status, embedding_model, "
    "extraction_model, update_count, version, last_accessed, access_count, pinned, hints, "
    "superseded_by"
)


# The Memory fields read from their column as stored; the rest need a default or a cast.
_AS_STORED = (
    "id", "content", "type", "category", "content_hash", "normalized_content", "source_id",
    "source_type", "who", "why", "project", "agent_id", "session_id", "created_at",
    "updated_at", "event_at", "deleted_at", "extraction_status", "embedding_model",
    "extraction_model", "last_accessed", "superseded_by",
)


def row_to_memory(row: Row) -> Memory:
    return Memory(
        **{name: row[name] for name in _AS_STORED},
        confidence=float(row["confidence"] if row["confidence"] is not None else 1.0),
        importance=float(row["importance"] if row["importance"] is not None else 0.5),
        tags=tuple(json.loads(row["tags"] or "[]")),
        is_deleted=bool(row["is_deleted"]),
        update_count=int(row["update_count"]),
        version=int(row["version"]),
        access_count=int(row["access_count"]),
        pinned=bool(row["pinned"]),
        hints=row["hints"] or "",
    )


def find_live_by_hash(
    conn: Executes, content_hash: str, agent_id: str, project: str | None,
    dialect: Dialect = SQLITE,
) -> str | None:
    """The live memory holding `content_hash` in the scope (agent, project), if any."""
    q = dialect.mark
    row = conn.execute(
        f"SELECT id FROM memories WHERE content_hash = {q} AND agent_id = {q}"
        f" AND {dialect.same_key('project')} AND {dialect.no('is_deleted')}",
        (content_hash, agent_id, project),
    ).fetchone()
    return row[0] if row else None


def insert(
    conn: Connection,
    memory: NewMemory,
    *,
    storage: str,
    normalized: str,
    content_hash: str,
    now: str,
    embedding_model: str | None = None,
    extraction_status: str = "none",
) -> tuple[str, bool]:
    """Insert a memory; return (id, deduped). A live row with the same hash in the same agent
    and project wins."""
    existing = find_live_by_hash(conn, content_hash, memory.agent_id, memory.project)
    if existing:
        return existing, True
    memory_id = new_id()
    try:
        conn.execute(
            "INSERT INTO memories (id, content, type, category, content_hash, normalized_content,"
            " confidence, importance, source_id, source_type, tags, who, why, project, agent_id,"
            " session_id, created_at, updated_at, event_at, extraction_status, embedding_model,"
            " pinned) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                memory_id, storage, memory.type, memory.category, content_hash, normalized,
                memory.confidence, memory.importance, memory.source_id, memory.source_type,
                dumps(list(memory.tags)), memory.who, memory.why, memory.project,
                memory.agent_id, memory.session_id, now, now, memory.event_at,
                extraction_status, embedding_model, int(memory.pinned),
            ),
        )
    except IntegrityError:
        # Another connection inserted the same content between our check and insert.
        existing = find_live_by_hash(conn, content_hash, memory.agent_id, memory.project)
        if existing is None:
            raise
        return existing, True
    return memory_id, False


def set_embedding_model(
    conn: Executes, ids: Sequence[str], model: str, dialect: Dialect = SQLITE
) -> None:
    """Record `model` as what embedded those of these live memories whose content has a
    current vector of it (derived data: no version, no history)."""
    q = dialect.mark
    for start in range(0, len(ids), 500):
        among, chunk = dialect.one_of("id", ids[start:start + 500])
        conn.execute(
            f"UPDATE memories SET embedding_model = {q} WHERE {among}"
            f" AND {dialect.no('is_deleted')} AND {dialect.differs('embedding_model', q)}"
            " AND EXISTS (SELECT 1 FROM embeddings e WHERE"
            f" e.content_hash = memories.content_hash AND e.model = {q}"
            f" AND {dialect.no('e.stale')})",
            (model, *chunk, model, model))


def get(conn: Connection, memory_id: str) -> Memory | None:
    row = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return row_to_memory(row) if row else None


def get_many(conn: Connection, ids: Sequence[str]) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id IN ({marks})", chunk):
            found[row[0]] = _memory_of(row)
    return found


def _memory_of(row: Sequence[Any]) -> Memory:
    """`row_to_memory` of a row selected as COLUMNS, read by position: recall reads its whole
    shortlist (50 rows a query), and a lookup by name scans the columns' names each time."""
    (memory_id, content, type_, category, content_hash, normalized, confidence, importance,
     source_id, source_type, tags, who, why, project, agent_id, session_id, created_at,
     updated_at, event_at, is_deleted, deleted_at, extraction_status, embedding_model,
     extraction_model, update_count, version, last_accessed, access_count, pinned, hints,
     superseded_by) = row
    return Memory(
        id=memory_id, content=content, type=type_, category=category,
        content_hash=content_hash, normalized_content=normalized,
        confidence=float(confidence if confidence is not None else 1.0),
        importance=float(importance if importance is not None else 0.5),
        source_id=source_id, source_type=source_type,
        tags=() if not tags or tags == "[]" else tuple(json.loads(tags)),
        who=who, why=why, project=project, agent_id=agent_id, session_id=session_id,
        created_at=created_at, updated_at=updated_at, event_at=event_at,
        is_deleted=bool(is_deleted), deleted_at=deleted_at, extraction_status=extraction_status,
        embedding_model=embedding_model, extraction_model=extraction_model,
        update_count=int(update_count), version=int(version), last_accessed=last_accessed,
        access_count=int(access_count), pinned=bool(pinned), hints=hints or "",
        superseded_by=superseded_by,
    )


def filter_sql(
    filters: MemoryFilters, alias: str = "m", dialect: Dialect = SQLITE
) -> tuple[str, list[Any]]:
    """A WHERE fragment (without the keyword) and its parameters for `filters`."""
    q = dialect.mark
    clauses: list[str] = []
    params: list[Any] = []
    if not filters.include_deleted:
        clauses.append(dialect.no(f"{alias}.is_deleted"))
    simple = {
        "type": filters.type, "who": filters.who, "project": filters.project,
        "agent_id": filters.agent_id, "source_id": filters.source_id,
    }
    for column, value in simple.items():
        if value is not None:
            clauses.append(f"{alias}.{column} = {q}")
            params.append(value)
    for tag in filters.tags:
        clauses.append(dialect.has_tag(f"{alias}.tags"))
        params.append(tag)
    if filters.since is not None:
        clauses.append(f"COALESCE({alias}.event_at, {alias}.created_at) >= {q}")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"COALESCE({alias}.event_at, {alias}.created_at) <= {q}")
        params.append(filters.until)
    if filters.pinned is not None:
        clauses.append(f"{alias}.pinned = {q}")
        params.append(dialect.flag(filters.pinned))
    if filters.importance_min is not None:
        clauses.append(f"{alias}.importance >= {q}")
        params.append(filters.importance_min)
    if filters.community is not None:
        # Community-scoped recall: the memory mentions an entity of the community. Probed per
        # memory through the mentions' primary key (memory_id, entity_id), then by entity id.
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_entity_mentions x JOIN entities e ON e.id = x.entity_id"
            f" WHERE x.memory_id = {alias}.id AND e.community_id = {q})"
        )
        params.append(filters.community)
    return (" AND ".join(clauses) or dialect.true), params


def list_page(
    conn: Connection, filters: MemoryFilters, *, limit: int, offset: int
) -> tuple[list[Memory], int]:
    where, params = filter_sql(filters)
    total = conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories m WHERE {where} "
        "ORDER BY m.created_at DESC, m.rowid DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [row_to_memory(r) for r in rows], int(total)


def allowed_ids(conn: Connection, ids: Sequence[str], filters: MemoryFilters) -> set[str]:
    """The subset of `ids` that passes `filters` (used to filter other channels' candidates)."""
    where, params = filter_sql(filters)
    allowed: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        # CROSS JOIN fixes the loop order: each candidate id is looked up by primary key, instead
        # of SQLite choosing a filter column's index and scanning it (60 ms vs 0.3 ms at 100k).
        rows = conn.execute(
            "SELECT m.id FROM json_each(?) AS j CROSS JOIN memories m ON m.id = j.value "
            f"WHERE {where}",
            [dumps(chunk), *params],
        )
        allowed.update(r[0] for r in rows)
    return allowed


def update(
    conn: Executes, memory_id: str, changes: dict[str, Any], now: str,
    dialect: Dialect = SQLITE,
) -> None:
    """Apply column changes, bumping version and update_count."""
    sets = ", ".join(f"{column} = ?" for column in changes)
    conn.execute(dialect.sql(
        f"UPDATE memories SET {sets}, updated_at = ?, version = version + 1, "
        "update_count = update_count + 1 WHERE id = ?"),
        [*changes.values(), now, memory_id],
    )


def soft_delete(conn: Executes, memory_id: str, now: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql(
        f"UPDATE memories SET is_deleted = {dialect.literal(True)}, deleted_at = ?, updated_at = ?, "
        "version = version + 1 WHERE id = ?"),
        (now, now, memory_id),
    )


def recover(conn: Executes, memory_id: str, now: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql(
        f"UPDATE memories SET is_deleted = {dialect.literal(False)}, deleted_at = NULL,"
        " updated_at = ?, version = version + 1 WHERE id = ?"),
        (now, memory_id),
    )


def touch(conn: Executes, ids: Sequence[str], now: str, dialect: Dialect = SQLITE) -> None:
    """One access of each memory, at `now`."""
    statement = dialect.sql(
        "UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?")
    for memory_id in ids:
        conn.execute(statement, (now, memory_id))


def set_hints(conn: Executes, memory_id: str, hints: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql("UPDATE memories SET hints = ? WHERE id = ?"), (hints, memory_id))


def set_extraction_status(
    conn: Executes, memory_id: str, status: str, model: str | None, dialect: Dialect = SQLITE
) -> None:
    conn.execute(dialect.sql(
        "UPDATE memories SET extraction_status = ?, extraction_model = COALESCE(?, "
        "extraction_model) WHERE id = ?"),
        (status, model, memory_id),
    )


def hard_delete(conn: Connection, memory_id: str) -> None:
    conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))


def count_live(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories WHERE is_deleted = 0").fetchone()[0])


def add_accesses(conn: Connection, rows: Sequence[tuple[str, int, str]]) -> None:
    """Accesses recorded in bulk (store/accesses.py): (memory id, how many, latest time). The
    latest time wins, so a batch written late never moves `last_accessed` back."""
    conn.executemany(
        "UPDATE memories SET access_count = access_count + ?, "
        "last_accessed = MAX(COALESCE(last_accessed, ''), ?) WHERE id = ?",
        [(count, last, memory_id) for memory_id, count, last in rows],
    )
