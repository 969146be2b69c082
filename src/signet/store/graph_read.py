"""SQL for the knowledge graph's read side in recall: traversal steps, the legacy graph boost,
entity degrees for hub dampening, and the memory vectors traversal scores against.

Every query is bounded by a LIMIT the caller passes (the traversal bounds of the config), so a
hub entity with 100k mentions costs one indexed range scan of `limit` rows, never a full read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.embeddings import from_blob


@dataclass(frozen=True, slots=True)
class Pin:
    pin_type: str
    weight: float | None


@dataclass(frozen=True, slots=True)
class Edge:
    """A dependency seen from one end: the other entity, its strength and learned weight."""

    id: str
    other: str
    strength: float
    traversal_weight: float


@dataclass(frozen=True, slots=True)
class Aspect:
    id: str
    name: str
    weight: float
    confidence: float


def pins(conn: Executes, agent_id: str, *, dialect: Dialect = SQLITE) -> dict[str, Pin]:
    rows = conn.execute(dialect.sql(
        "SELECT entity_id, pin_type, weight_override FROM entity_pinning WHERE agent_id = ?"),
        (agent_id,),
    ).fetchall()
    return {r[0]: Pin(r[1], r[2]) for r in rows}


def aspects(
    conn: Executes, entity_id: str, limit: int, *, dialect: Dialect = SQLITE
) -> list[Aspect]:
    rows = conn.execute(dialect.sql(
        "SELECT id, aspect_name, weight, confidence FROM entity_aspects WHERE entity_id = ?"
        " ORDER BY weight * confidence DESC, aspect_name LIMIT ?"),
        (entity_id, limit),
    ).fetchall()
    return [Aspect(r[0], r[1], float(r[2]), float(r[3])) for r in rows]


def attribute_memories(conn: Connection, aspect_id: str, limit: int) -> list[tuple[str, float]]:
    """(source memory, confidence) of the aspect's attributes, most confident first.

    Rows come in index order (migration 009), so reading stops at the `limit`-th distinct
    memory instead of grouping every attribute of a large aspect; a memory's first row is its
    most confident one."""
    rows = conn.execute(
        "SELECT source_memory_id, confidence FROM entity_attributes"
        " WHERE aspect_id = ? AND source_memory_id IS NOT NULL"
        " ORDER BY confidence DESC, source_memory_id",
        (aspect_id,),
    )
    found: dict[str, float] = {}
    for memory_id, confidence in rows:
        if len(found) >= limit:
            break
        found.setdefault(memory_id, float(confidence))
    return list(found.items())


def dependency_edges(
    conn: Executes, entity_id: str, *, min_strength: float, limit: int,
    dialect: Dialect = SQLITE,
) -> list[Edge]:
    """Dependencies touching the entity in either direction, strongest (x weight) first.

    Each direction is read in index order (migration 009) up to `limit` rows, then the two
    short lists are merged."""
    edges: list[tuple[float, str, Edge]] = []
    for near, far in (("source_entity_id", "target_entity_id"), ("target_entity_id", "source_entity_id")):
        rows = conn.execute(dialect.sql(
            f"SELECT id, {far}, strength, traversal_weight FROM entity_dependencies"
            f" WHERE {near} = ? AND strength >= ? AND {far} != ?"
            " ORDER BY strength * traversal_weight DESC, id LIMIT ?"),
            (entity_id, min_strength, entity_id, limit),
        ).fetchall()
        edges.extend(
            (-float(r[2]) * float(r[3]), r[0], Edge(r[0], r[1], float(r[2]), float(r[3])))
            for r in rows
        )
    edges.sort(key=lambda item: (item[0], item[1]))
    return [edge for _, _, edge in edges[:limit]]


def mention_count(conn: Executes, entity_id: str, *, dialect: Dialect = SQLITE) -> int:
    row = conn.execute(
        dialect.sql("SELECT mentions FROM entities WHERE id = ?"), (entity_id,)).fetchone()
    return int(row[0]) if row else 0


def mention_memories(
    conn: Executes, entity_id: str, limit: int, *, dialect: Dialect = SQLITE
) -> list[tuple[str, float]]:
    """Memories linked to the entity, with the link's confidence (1.0 when not recorded)."""
    rows = conn.execute(dialect.sql(
        "SELECT memory_id, COALESCE(confidence, 1.0) FROM memory_entity_mentions"
        " WHERE entity_id = ? LIMIT ?"),
        (entity_id, limit),
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def live_ids(conn: Connection, memory_ids: Sequence[str]) -> set[str]:
    """The ids among `memory_ids` of memories not deleted. The `+` keeps SQLite on the primary
    key: on `is_deleted = 0` alone it picks the (is_deleted, created_at) index and scans."""
    if not memory_ids:
        return set()
    marks = ",".join("?" * len(memory_ids))
    rows = conn.execute(
        f"SELECT id FROM memories WHERE id IN ({marks}) AND +is_deleted = 0", tuple(memory_ids)
    ).fetchall()
    return {r[0] for r in rows}


def memory_vectors(
    conn: Connection, memory_ids: Sequence[str], model: str
) -> dict[str, np.ndarray]:
    if not memory_ids:
        return {}
    marks = ",".join("?" * len(memory_ids))
    rows = conn.execute(
        "SELECT m.id, e.vector, e.dimensions FROM memories m JOIN embeddings e"
        " ON e.content_hash = m.content_hash AND e.model = ? AND e.stale = 0"
        f" WHERE m.id IN ({marks})",
        (model, *memory_ids),
    ).fetchall()
    return {r[0]: from_blob(r[1], int(r[2])) for r in rows}


# -- the legacy graph boost ----------------------------------------------------------------------


def entities_like(conn: Connection, tokens: Sequence[str], agent_id: str, limit: int) -> list[str]:
    if not tokens:
        return []
    likes = " OR ".join("canonical_name LIKE ?" for _ in tokens)
    rows = conn.execute(
        f"SELECT id FROM entities WHERE agent_id = ? AND ({likes}) ORDER BY mentions DESC, id LIMIT ?",
        (agent_id, *(f"%{t}%" for t in tokens), limit),
    ).fetchall()
    return [r[0] for r in rows]


def entity_marker(
    conn: Executes, agent_id: str, *, dialect: Dialect = SQLITE
) -> tuple[int, int]:
    """Changes when the agent's entities are added or removed: (count, highest rowid)."""
    row = conn.execute(dialect.sql(
        f"SELECT count(*), COALESCE(max({dialect.insertion_order}), 0) FROM entities"
        " WHERE agent_id = ?"), (agent_id,)
    ).fetchone()
    return int(row[0]), int(row[1])


def canonical_names(
    conn: Executes, agent_id: str, *, dialect: Dialect = SQLITE
) -> list[tuple[str, str]]:
    """(id, canonical name) of every entity of the agent."""
    rows = conn.execute(dialect.sql(
        "SELECT id, canonical_name FROM entities WHERE agent_id = ?"), (agent_id,)
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def by_mentions(
    conn: Executes, entity_ids: Sequence[str], limit: int, *, dialect: Dialect = SQLITE
) -> list[str]:
    return _among(conn, "SELECT id FROM entities WHERE {} ORDER BY mentions DESC, id",
                  ("id",), entity_ids, limit, dialect)


def relation_neighbours(
    conn: Executes, entity_ids: Sequence[str], limit: int, *, dialect: Dialect = SQLITE
) -> list[str]:
    return _among(conn, "SELECT target_entity_id FROM relations WHERE {}"
                  " UNION SELECT source_entity_id FROM relations WHERE {}",
                  ("source_entity_id", "target_entity_id"), entity_ids, limit, dialect)


def memories_of_entities(
    conn: Executes, entity_ids: Sequence[str], limit: int, *, dialect: Dialect = SQLITE
) -> list[str]:
    return _among(conn, "SELECT DISTINCT memory_id FROM memory_entity_mentions WHERE {}",
                  ("entity_id",), entity_ids, limit, dialect)


def _among(
    conn: Executes, statement: str, columns: Sequence[str], entity_ids: Sequence[str],
    limit: int, dialect: Dialect,
) -> list[str]:
    """The first column of up to `limit` rows of `statement`, each `{}` in it one of `columns`
    among `entity_ids`."""
    if not entity_ids:
        return []
    among = [dialect.one_of(column, entity_ids) for column in columns]
    rows = conn.execute(
        statement.format(*(where for where, _ in among)) + f" LIMIT {dialect.mark}",
        (*(p for _, params in among for p in params), limit),
    ).fetchall()
    return [r[0] for r in rows]


# -- degrees (hub dampening) ---------------------------------------------------------------------

_DEGREES = (
    "SELECT id, sum(n) FROM ("
    " SELECT id, mentions AS n FROM entities {where}"
    " UNION ALL SELECT source_entity_id, 1 FROM relations {rel_src}"
    " UNION ALL SELECT target_entity_id, 1 FROM relations {rel_tgt}"
    " UNION ALL SELECT source_entity_id, 1 FROM entity_dependencies {rel_src}"
    " UNION ALL SELECT target_entity_id, 1 FROM entity_dependencies {rel_tgt}"
    ") AS d GROUP BY id"
)


def sample_slot(column: str, modulo: str = "%") -> str:
    """SQL mixing an entity's row number `column` into [0, 2^31 - 1) (`modulo`: `%%` where `%`
    marks a parameter): a sample takes the rows whose slot is a multiple of its stride. Row
    numbers are the whole table's, which other agents' rows interleave (one in two, say): an
    agent's own rows can all share a remainder modulo the stride, and `column % stride` would
    then sample none of them. The product stays below 2^63 whatever the row number."""
    return f"({column} {modulo} 2147483647) * 2654435761 {modulo} 2147483647"


_SAMPLED_DEGREES = (
    "SELECT e.mentions"
    " + (SELECT count(*) FROM relations WHERE source_entity_id = e.id)"
    " + (SELECT count(*) FROM relations WHERE target_entity_id = e.id)"
    " + (SELECT count(*) FROM entity_dependencies WHERE source_entity_id = e.id)"
    " + (SELECT count(*) FROM entity_dependencies WHERE target_entity_id = e.id)"
    f" FROM entities e WHERE e.agent_id = ? AND {sample_slot('e.rowid')} % ? = 0"
)


def all_degrees(conn: Connection, agent_id: str, sample: int = 1000) -> list[int]:
    """Degrees of the agent's entities (memory mentions plus the relations and dependencies
    touching each), for every one or, above `sample` entities, a sample of about that many
    (`sample_slot`): enough for a percentile, at a bounded cost (~8 ms for 1,000 at 10k
    entities). One agent's graph: another's entities must not move its hub threshold."""
    count = int(conn.execute(
        "SELECT count(*) FROM entities WHERE agent_id = ?", (agent_id,)).fetchone()[0])
    stride = max(1, -(-count // sample))
    return [int(r[0]) for r in conn.execute(_SAMPLED_DEGREES, (agent_id, stride))]


def degrees_of(
    conn: Executes, entity_ids: Iterable[str], *, dialect: Dialect = SQLITE
) -> dict[str, int]:
    ids = sorted(set(entity_ids))
    if not ids:
        return {}
    among, params = dialect.one_of("id", ids)
    sql = _DEGREES.format(
        where=f"WHERE {among}", rel_src=f"WHERE {dialect.one_of('source_entity_id', ids)[0]}",
        rel_tgt=f"WHERE {dialect.one_of('target_entity_id', ids)[0]}",
    )
    return {r[0]: int(r[1]) for r in conn.execute(sql, params * 5).fetchall()}


def entities_by_memory(
    conn: Executes, memory_ids: Sequence[str], *, dialect: Dialect = SQLITE
) -> dict[str, list[str]]:
    if not memory_ids:
        return {}
    among, params = dialect.one_of("memory_id", memory_ids)
    found: dict[str, list[str]] = {}
    for row in conn.execute(
        f"SELECT memory_id, entity_id FROM memory_entity_mentions WHERE {among}", params
    ).fetchall():
        found.setdefault(row[0], []).append(row[1])
    return found
