"""SQL for reading the knowledge graph as a whole (the /api/knowledge routes and
`signet graph`): entity lists and detail (aspects with attributes, dependencies, memories),
communities, and counts."""

from __future__ import annotations

import json
from typing import Any

from signet.store.dialect import SQLITE, Dialect, Executes

_ENTITY = (
    "SELECT e.id, e.name, e.entity_type, e.description, e.canonical_name, e.mentions, e.agent_id,"
    " e.community_id, e.created_at, e.updated_at, p.pin_type AS pinned,"
    " p.weight_override AS pin_weight"
    " FROM entities e LEFT JOIN entity_pinning p ON p.entity_id = e.id AND p.agent_id = e.agent_id"
)

# Every statement here runs on both backends, rendered in the caller's dialect; rows are read
# by position (a plain connection of either driver).


def _dicts(cursor: Any) -> list[dict[str, Any]]:
    """The cursor's rows as dicts by column name."""
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def list_entities(
    conn: Executes, *, agent_id: str, search: str | None, limit: int, offset: int,
    dialect: Dialect = SQLITE,
) -> tuple[list[dict[str, Any]], int]:
    q = dialect.mark
    where, params = f"e.agent_id = {q}", [agent_id]
    if search:
        where += f" AND {dialect.like_nocase('e.canonical_name')}"
        params.append(f"%{search}%")
    total = conn.execute(f"SELECT count(*) FROM entities e WHERE {where}", params).fetchone()[0]
    rows = _dicts(conn.execute(
        f"{_ENTITY} WHERE {where} ORDER BY e.mentions DESC, e.canonical_name"
        f" LIMIT {q} OFFSET {q}", (*params, limit, offset)))
    return rows, int(total)


def get_entity(conn: Executes, entity_id: str, dialect: Dialect = SQLITE) -> dict[str, Any] | None:
    rows = _dicts(conn.execute(f"{_ENTITY} WHERE e.id = {dialect.mark}", (entity_id,)))
    return rows[0] if rows else None


def aliases(conn: Executes, entity_id: str, dialect: Dialect = SQLITE) -> list[str]:
    rows = conn.execute(dialect.sql(
        "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY canonical_alias"),
        (entity_id,)).fetchall()
    return [r[0] for r in rows]


def aspects_with_attributes(
    conn: Executes, entity_id: str, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    aspects = _dicts(conn.execute(dialect.sql(
        "SELECT id, aspect_name AS name, description, confidence, weight FROM entity_aspects"
        " WHERE entity_id = ? ORDER BY weight * confidence DESC, aspect_name"), (entity_id,)))
    for aspect in aspects:
        aspect["attributes"] = _dicts(conn.execute(dialect.sql(
            "SELECT id, kind, attribute_key AS key, attribute_value AS value, confidence,"
            " source_memory_id FROM entity_attributes WHERE aspect_id = ?"
            " ORDER BY confidence DESC, attribute_key"), (aspect["id"],)))
    return aspects


def dependencies(conn: Executes, entity_id: str, dialect: Dialect = SQLITE) -> list[dict[str, Any]]:
    return _dicts(conn.execute(dialect.sql(
        "SELECT d.id, 'out' AS direction, d.target_entity_id AS entity_id, e.name AS entity_name,"
        " d.dependency_type AS type, d.strength, d.traversal_weight FROM entity_dependencies d"
        " JOIN entities e ON e.id = d.target_entity_id WHERE d.source_entity_id = ?"
        " UNION ALL SELECT d.id, 'in', d.source_entity_id, e.name, d.dependency_type, d.strength,"
        " d.traversal_weight FROM entity_dependencies d JOIN entities e ON e.id = d.source_entity_id"
        " WHERE d.target_entity_id = ? ORDER BY 6 DESC, 1"),
        (entity_id, entity_id)))


def memories(
    conn: Executes, entity_id: str, limit: int, dialect: Dialect = SQLITE
) -> list[dict[str, Any]]:
    return _dicts(conn.execute(dialect.sql(
        "SELECT m.id, m.content, m.type, x.mention_text, x.confidence FROM memory_entity_mentions x"
        f" JOIN memories m ON m.id = x.memory_id WHERE x.entity_id = ? AND {dialect.no('m.is_deleted')}"
        " ORDER BY m.created_at DESC, m.id LIMIT ?"),
        (entity_id, limit)))


def communities(conn: Executes, agent_id: str, dialect: Dialect = SQLITE) -> list[dict[str, Any]]:
    rows = _dicts(conn.execute(dialect.sql(
        "SELECT id, label, size, modularity, quality, member_ids, created_at FROM entity_communities"
        " WHERE agent_id = ? ORDER BY size DESC, label"),
        (agent_id,)))
    return [{**r, "member_ids": json.loads(r["member_ids"])} for r in rows]


def community_ids(
    conn: Executes, ref: str, agent_id: str | None, *, dialect: Dialect = SQLITE
) -> list[str]:
    """The community whose id is `ref`; else those whose label is `ref` (any case), of
    `agent_id` (of every agent when None). Several means the name is ambiguous."""
    row = conn.execute(
        f"SELECT id FROM entity_communities WHERE id = {dialect.mark}", (ref,)).fetchone()
    if row is not None:
        return [row[0]]
    where, params = dialect.equals_nocase("label"), [ref]
    if agent_id is not None:
        where += f" AND agent_id = {dialect.mark}"
        params.append(agent_id)
    rows = conn.execute(f"SELECT id FROM entity_communities WHERE {where} ORDER BY id", params)
    return [r[0] for r in rows.fetchall()]


def stats(conn: Executes, agent_id: str, dialect: Dialect = SQLITE) -> dict[str, int]:
    def count(sql: str) -> int:
        return int(conn.execute(dialect.sql(sql), (agent_id,)).fetchone()[0])

    return {
        "entities": count("SELECT count(*) FROM entities WHERE agent_id = ?"),
        "aliases": count("SELECT count(*) FROM entity_aliases WHERE agent_id = ?"),
        "relations": count(
            "SELECT count(*) FROM relations r JOIN entities e ON e.id = r.source_entity_id"
            " WHERE e.agent_id = ?"
        ),
        "mentions": count(
            "SELECT count(*) FROM memory_entity_mentions x JOIN entities e ON e.id = x.entity_id"
            " WHERE e.agent_id = ?"
        ),
        "aspects": count("SELECT count(*) FROM entity_aspects WHERE agent_id = ?"),
        "attributes": count("SELECT count(*) FROM entity_attributes WHERE agent_id = ?"),
        "dependencies": count("SELECT count(*) FROM entity_dependencies WHERE agent_id = ?"),
        "communities": count("SELECT count(*) FROM entity_communities WHERE agent_id = ?"),
        "pinned": count("SELECT count(*) FROM entity_pinning WHERE agent_id = ? AND pin_type = 'pin'"),
        "suppressed": count(
            "SELECT count(*) FROM entity_pinning WHERE agent_id = ? AND pin_type = 'suppress'"
        ),
    }


# -- communities: the write side ---------------------------------------------------------------


def dependency_weights(
    conn: Executes, agent_id: str, dialect: Dialect = SQLITE
) -> list[tuple[str, str, float]]:
    rows = conn.execute(dialect.sql(
        "SELECT source_entity_id, target_entity_id, strength * traversal_weight"
        " FROM entity_dependencies WHERE agent_id = ? AND source_entity_id != target_entity_id"),
        (agent_id,),
    ).fetchall()
    return [(r[0], r[1], float(r[2])) for r in rows]


def entity_names(conn: Executes, ids: list[str], dialect: Dialect = SQLITE) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        which, args = dialect.one_of("id", ids[start : start + 500])
        found.update((r[0], r[1]) for r in conn.execute(
            f"SELECT id, name FROM entities WHERE {which}", args).fetchall())
    return found


def replace_communities(
    conn: Executes, agent_id: str, found: list[dict[str, Any]], now: str,
    dialect: Dialect = SQLITE,
) -> None:
    """Replace the agent's communities; each item: id, label, members, modularity, quality."""
    conn.execute(dialect.sql("UPDATE entities SET community_id = NULL WHERE agent_id = ?"),
                 (agent_id,))
    conn.execute(dialect.sql("DELETE FROM entity_communities WHERE agent_id = ?"), (agent_id,))
    for item in found:
        conn.execute(dialect.sql(
            "INSERT INTO entity_communities (id, agent_id, label, size, modularity, quality,"
            " member_ids, created_at) VALUES (?,?,?,?,?,?,?,?)"),
            (item["id"], agent_id, item["label"], len(item["members"]), item["modularity"],
             item["quality"], json.dumps(item["members"]), now),
        )
        if item["members"]:
            which, args = dialect.one_of("id", list(item["members"]))
            conn.execute(f"UPDATE entities SET community_id = {dialect.mark} WHERE {which}",
                         (item["id"], *args))
