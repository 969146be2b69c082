"""SQL for the knowledge graph's structure: aliases, aspects, attributes (each with its source
memory), dependencies (whose `traversal_weight` feedback moves), relation confidence (a running
mean over mentions), pins and desire-path weights. Entities are store/graph.py's; only
graph/apply.py and the feedback and pin operations call these.
"""

from __future__ import annotations

from collections.abc import Sequence

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.graph import canonical
from signet.store.memories import new_id

PIN_TYPES = ("pin", "suppress")


def set_entity_details(
    conn: Executes, entity_id: str, *, entity_type: str | None, description: str | None,
    now: str, dialect: Dialect = SQLITE,
) -> None:
    """Fill in the type and description an author gave; a missing value keeps the stored one."""
    conn.execute(dialect.sql(
        "UPDATE entities SET entity_type = COALESCE(?, entity_type),"
        " description = COALESCE(?, description), updated_at = ? WHERE id = ?"),
        (entity_type, description, now, entity_id),
    )


def add_alias(
    conn: Executes, entity_id: str, alias: str, *, agent_id: str, now: str,
    dialect: Dialect = SQLITE,
) -> bool:
    """Point `alias` at the entity; True when the alias is new for it."""
    cursor = conn.execute(dialect.sql(
        "INSERT INTO entity_aliases (alias, canonical_alias, entity_id, agent_id, created_at)"
        " VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING"),
        (" ".join(alias.split()), canonical(alias), entity_id, agent_id, now),
    )
    return cursor.rowcount == 1


def resolve(conn: Connection, keys: Sequence[str], agent_id: str) -> dict[str, str]:
    """Canonical key -> entity id, by entity name first and then by alias."""
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    found: dict[str, str] = {}
    for row in conn.execute(
        "SELECT a.canonical_alias, a.entity_id FROM entity_aliases a"
        f" WHERE a.agent_id = ? AND a.canonical_alias IN ({marks}) ORDER BY a.created_at",
        (agent_id, *keys),
    ):
        found.setdefault(row[0], row[1])
    for row in conn.execute(
        f"SELECT canonical_name, id FROM entities WHERE agent_id = ? AND canonical_name IN ({marks})",
        (agent_id, *keys),
    ):
        found[row[0]] = row[1]  # a real name wins over an alias
    return found


def common_entities(
    conn: Connection, ids: Sequence[str], fraction: float, min_memories: int
) -> set[str]:
    """The entities of `ids` mentioned more often than `fraction` of all memories, once the
    store holds at least `min_memories` (max(rowid) is O(1) and close to the row count)."""
    if not ids:
        return set()
    row = conn.execute("SELECT max(rowid) FROM memories").fetchone()
    total = int(row[0] or 0) if row else 0
    if total < min_memories:
        return set()
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id FROM entities WHERE id IN ({marks}) AND mentions > ?",
        (*ids, fraction * total),
    )
    return {r[0] for r in rows}


def upsert_relation_mean(
    conn: Connection, source_id: str, target_id: str, relation_type: str, *,
    confidence: float, strength: float | None, now: str,
) -> str:
    """The (source, target, type) edge: one more mention, confidence as the running mean."""
    row = conn.execute(
        "INSERT INTO relations (id, source_entity_id, target_entity_id, relation_type, strength,"
        " mentions, confidence, created_at, updated_at) VALUES (?,?,?,?,?,1,?,?,?)"
        " ON CONFLICT(source_entity_id, target_entity_id, relation_type) DO UPDATE SET"
        " confidence = (confidence * mentions + excluded.confidence) / (mentions + 1),"
        " mentions = mentions + 1, strength = COALESCE(?, strength),"
        " updated_at = excluded.updated_at RETURNING id",
        (new_id(), source_id, target_id, relation_type, 1.0 if strength is None else strength,
         confidence, now, now, strength),
    ).fetchone()
    return str(row[0])


def upsert_aspect(
    conn: Executes, entity_id: str, aspect_name: str, *, agent_id: str,
    description: str | None, confidence: float, now: str, dialect: Dialect = SQLITE,
) -> str:
    """The entity's named aspect; a repeat keeps the higher confidence and any description."""
    row = conn.execute(dialect.sql(
        "INSERT INTO entity_aspects AS a (id, entity_id, aspect_name, description, confidence,"
        " agent_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)"
        " ON CONFLICT(entity_id, aspect_name) DO UPDATE SET"
        " description = COALESCE(excluded.description, a.description),"
        f" confidence = {dialect.greatest('a.confidence', 'excluded.confidence')},"
        " updated_at = excluded.updated_at RETURNING id"),
        (new_id(), entity_id, aspect_name, description, confidence, agent_id, now, now),
    ).fetchone()
    return str(row[0])


def upsert_attribute(
    conn: Executes, aspect_id: str, entity_id: str, key: str, value: str, *, kind: str,
    confidence: float, source_memory_id: str | None, agent_id: str, now: str,
    dialect: Dialect = SQLITE,
) -> str:
    """One row per (aspect, kind, key, value); a repeat refreshes confidence and source."""
    row = conn.execute(dialect.sql(
        "SELECT id FROM entity_attributes WHERE aspect_id = ? AND kind = ? AND attribute_key = ?"
        " AND attribute_value = ?"),
        (aspect_id, kind, key, value),
    ).fetchone()
    if row is not None:
        conn.execute(dialect.sql(
            f"UPDATE entity_attributes SET confidence = {dialect.greatest('confidence', '?')},"
            " source_memory_id = COALESCE(?, source_memory_id), updated_at = ? WHERE id = ?"),
            (confidence, source_memory_id, now, row[0]),
        )
        return str(row[0])
    attribute_id = new_id()
    conn.execute(dialect.sql(
        "INSERT INTO entity_attributes (id, aspect_id, entity_id, kind, attribute_key,"
        " attribute_value, confidence, source_memory_id, agent_id, created_at, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        (attribute_id, aspect_id, entity_id, kind, key, value, confidence, source_memory_id,
         agent_id, now, now),
    )
    return attribute_id


def upsert_dependency(
    conn: Executes, source_id: str, target_id: str, dependency_type: str, *,
    strength: float, agent_id: str, now: str, dialect: Dialect = SQLITE,
) -> str:
    """The structural edge; a repeat keeps the stronger strength and its learned weight."""
    row = conn.execute(dialect.sql(
        "INSERT INTO entity_dependencies AS d (id, source_entity_id, target_entity_id,"
        " dependency_type, strength, agent_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)"
        " ON CONFLICT(source_entity_id, target_entity_id, dependency_type) DO UPDATE SET"
        f" strength = {dialect.greatest('d.strength', 'excluded.strength')},"
        " updated_at = excluded.updated_at RETURNING id"),
        (new_id(), source_id, target_id, dependency_type, strength, agent_id, now, now),
    ).fetchone()
    return str(row[0])


# -- pins ----------------------------------------------------------------------------------------


def set_pin(
    conn: Executes, entity_id: str, *, agent_id: str, pin_type: str, weight: float | None,
    reason: str | None, pinned_by: str | None, now: str, dialect: Dialect = SQLITE,
) -> None:
    conn.execute(dialect.sql(
        "INSERT INTO entity_pinning (entity_id, agent_id, pinned_by, reason, pinned_at, pin_type,"
        " weight_override) VALUES (?,?,?,?,?,?,?) ON CONFLICT(entity_id, agent_id) DO UPDATE SET"
        " pinned_by = excluded.pinned_by, reason = excluded.reason,"
        " pinned_at = excluded.pinned_at, pin_type = excluded.pin_type,"
        " weight_override = excluded.weight_override"),
        (entity_id, agent_id, pinned_by, reason, now, pin_type, weight),
    )


def clear_pin(
    conn: Executes, entity_id: str, *, agent_id: str, dialect: Dialect = SQLITE
) -> bool:
    cursor = conn.execute(dialect.sql(
        "DELETE FROM entity_pinning WHERE entity_id = ? AND agent_id = ?"), (entity_id, agent_id)
    )
    return cursor.rowcount > 0


# -- desire paths --------------------------------------------------------------------------------


def scale_dependency_weights(
    conn: Executes, ids: Sequence[str], factor: float, low: float, high: float, now: str,
    dialect: Dialect = SQLITE,
) -> int:
    """Multiply the traversal weight of the dependencies by `factor`, kept within [low, high]."""
    return _scale(conn, "entity_dependencies", "traversal_weight", ids, factor, low, high, now,
                  dialect)


def scale_aspect_weights(
    conn: Executes, ids: Sequence[str], factor: float, low: float, high: float, now: str,
    dialect: Dialect = SQLITE,
) -> int:
    return _scale(conn, "entity_aspects", "weight", ids, factor, low, high, now, dialect)


def _scale(
    conn: Executes, table: str, column: str, ids: Sequence[str], factor: float,
    low: float, high: float, now: str, dialect: Dialect,
) -> int:
    if not ids:
        return 0
    q = dialect.mark
    among, params = dialect.one_of("id", ids)
    cursor = conn.execute(
        f"UPDATE {table} SET {column} = {dialect.least(q, dialect.greatest(q, f'{column} * {q}'))},"
        f" updated_at = {q} WHERE {among}",
        (high, low, factor, now, *params),
    )
    return cursor.rowcount


def aspects_sourced_by(
    conn: Executes, memory_id: str, *, dialect: Dialect = SQLITE
) -> list[str]:
    """The aspects holding an attribute whose source is the memory."""
    rows = conn.execute(dialect.sql(
        "SELECT DISTINCT aspect_id FROM entity_attributes WHERE source_memory_id = ?"),
        (memory_id,),
    ).fetchall()
    return [str(r[0]) for r in rows]


# -- retention -----------------------------------------------------------------------------------


def decrement_entity_mentions(conn: Connection, memory_ids: Sequence[str]) -> dict[str, int]:
    """Before memories are purged: drop their mention links, decrement each linked entity's
    `mentions`, and delete the entities left with none (their relations, dependencies, aspects
    and attributes go with them by cascade). Entities the purge did not touch stay, even at
    zero mentions: an authored entity may have no memory yet."""
    ids = list(dict.fromkeys(memory_ids))
    counts: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for entity_id, n in conn.execute(
            f"SELECT entity_id, count(*) FROM memory_entity_mentions WHERE memory_id IN ({marks})"
            " GROUP BY entity_id", chunk,
        ):
            counts[entity_id] = counts.get(entity_id, 0) + int(n)
        conn.execute(f"DELETE FROM memory_entity_mentions WHERE memory_id IN ({marks})", chunk)
    conn.executemany(
        "UPDATE entities SET mentions = max(0, mentions - ?) WHERE id = ?",
        [(n, entity_id) for entity_id, n in counts.items()],
    )
    orphans = [
        e for e in counts
        if (row := conn.execute("SELECT mentions FROM entities WHERE id = ?", (e,)).fetchone())
        and row[0] == 0
    ]
    conn.executemany("DELETE FROM entities WHERE id = ?", [(e,) for e in orphans])
    return {"links": sum(counts.values()), "entities": len(counts), "orphans": len(orphans)}
