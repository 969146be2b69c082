"""The graph store protocol on PostgreSQL. Statements differing only in dialect are store/graph.py's
and store/knowledge.py's (`_shared`); the rest are written here (`ON CONFLICT`, `= ANY(%s)`,
`seq` for rowid, ILIKE for SQLite's ASCII-case-blind LIKE). Two daemons upserting one entity meet
at the same unique constraint, and `ON CONFLICT ... RETURNING id` gives both the one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import numpy as np
import psycopg
from psycopg.rows import dict_row

from signet.store import graph as graph_sql
from signet.store import graph_read, graph_views, prefixes
from signet.store import knowledge as know_sql
from signet.store.dialect import POSTGRES
from signet.store.graph import INLINE_LINK_CONFIDENCE, candidate_names
from signet.store.memories import new_id
from signet.store.postgres import vectors as pg_vectors
from signet.store.postgres.filters import filter_sql
from signet.types import Actor, MemoryFilters, dumps

__all__ = ["PostgresGraph", "PostgresGraphOps"]

P = ParamSpec("P")
R = TypeVar("R")


def _shared(function: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A store/ function `f(conn, ..., dialect=)` as a method: `ops.f(...)` is
    `f(ops.conn, ..., dialect=POSTGRES)`."""
    call = cast(Callable[..., R], function)

    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        return call(self.conn, *args, dialect=POSTGRES, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method



class PostgresGraph:
    """GraphStore on PostgresCore's connections (`connect`: PostgresCore's, a pooled connection, or the
    one of the caller's `PostgresCore.transaction()`, which a graph write then joins as a savepoint):
    a connection per read, one transaction per write."""

    backend = "postgres"

    def __init__(self, connect: Callable[[], AbstractContextManager[psycopg.Connection]]) -> None:
        self.connect = connect

    @contextmanager
    def reading(self, conn: Any = None) -> Iterator[PostgresGraphOps]:
        if isinstance(conn, psycopg.Connection):
            yield PostgresGraphOps(conn)
            return
        with self.connect() as own:
            yield PostgresGraphOps(own)

    @contextmanager
    def writing(self) -> Iterator[PostgresGraphOps]:
        with self.connect() as conn, conn.transaction():
            yield PostgresGraphOps(conn)


class PostgresGraphOps:
    """The graph's statements on one psycopg connection (autocommit, or in a transaction)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(sql, params).fetchall()

    def _lock(self, kind: str, key: str) -> None:
        """A transaction-scoped advisory lock on (kind, key), released at commit."""
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"graph:{kind}:{key}",))

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    # The statements both graphs share (store/graph.py, knowledge.py, graph_read.py), in this
    # dialect.
    upsert_entity = _shared(graph_sql.upsert_entity)
    upsert_relation = _shared(graph_sql.upsert_relation)
    link_mention = _shared(graph_sql.link_mention)
    unlink_memory = _shared(graph_sql.unlink_memory)
    entities_of_memory = _shared(graph_sql.entities_of_memory)
    set_entity_details = _shared(know_sql.set_entity_details)
    add_alias = _shared(know_sql.add_alias)
    upsert_aspect = _shared(know_sql.upsert_aspect)
    upsert_dependency = _shared(know_sql.upsert_dependency)
    set_pin = _shared(know_sql.set_pin)
    clear_pin = _shared(know_sql.clear_pin)
    scale_dependency_weights = _shared(know_sql.scale_dependency_weights)
    scale_aspect_weights = _shared(know_sql.scale_aspect_weights)
    aspects_sourced_by = _shared(know_sql.aspects_sourced_by)
    pins = _shared(graph_read.pins)
    aspects = _shared(graph_read.aspects)
    dependency_edges = _shared(graph_read.dependency_edges)
    mention_count = _shared(graph_read.mention_count)
    mention_memories = _shared(graph_read.mention_memories)
    entity_marker = _shared(graph_read.entity_marker)
    canonical_names = _shared(graph_read.canonical_names)
    by_mentions = _shared(graph_read.by_mentions)
    list_entities = _shared(graph_views.list_entities)
    get_entity = _shared(graph_views.get_entity)
    aliases = _shared(graph_views.aliases)
    aspects_with_attributes = _shared(graph_views.aspects_with_attributes)
    dependencies = _shared(graph_views.dependencies)
    memories = _shared(graph_views.memories)
    communities = _shared(graph_views.communities)
    stats = _shared(graph_views.stats)
    dependency_weights = _shared(graph_views.dependency_weights)
    entity_names = _shared(graph_views.entity_names)
    relation_neighbours = _shared(graph_read.relation_neighbours)
    memories_of_entities = _shared(graph_read.memories_of_entities)
    degrees_of = _shared(graph_read.degrees_of)
    entities_by_memory = _shared(graph_read.entities_by_memory)
    community_ids = _shared(graph_views.community_ids)

    # -- entities, relations, mentions ---------------------------------------------------------
    def link_known_entities(self, memory_id: str, agent_id: str, content: str, now: str) -> int:
        names = candidate_names(content)
        if not names:
            return 0
        rows = self._rows(
            "SELECT id, canonical_name FROM entities WHERE agent_id = %s"
            " AND canonical_name = ANY(%s) ORDER BY canonical_name",
            (agent_id, list(names)),
        )
        return sum(
            self.link_mention(memory_id, entity_id, mention_text=names[key],
                              confidence=INLINE_LINK_CONFIDENCE, now=now)
            for entity_id, key in rows
        )

    # -- the knowledge architecture -------------------------------------------------------------
    def resolve(self, keys: Sequence[str], agent_id: str) -> dict[str, str]:
        if not keys:
            return {}
        # One statement (a round trip to the server per step of recall counts): aliases first,
        # oldest first, then real names, which win over an alias.
        rows = self._rows(
            "SELECT 0, canonical_alias, entity_id, created_at FROM entity_aliases"
            " WHERE agent_id = %(agent)s AND canonical_alias = ANY(%(keys)s)"
            " UNION ALL SELECT 1, canonical_name, id, '' FROM entities"
            " WHERE agent_id = %(agent)s AND canonical_name = ANY(%(keys)s) ORDER BY 1, 4",
            {"agent": agent_id, "keys": list(keys)},  # type: ignore[arg-type]
        )
        found: dict[str, str] = {}
        for by_name, key, entity_id, _ in rows:
            if by_name:
                found[key] = entity_id
            else:
                found.setdefault(key, entity_id)
        return found

    def common_entities(
        self, ids: Sequence[str], fraction: float, min_memories: int
    ) -> set[str]:
        if not ids:
            return set()
        # max(seq) is O(1) through its unique index and close to the row count (SQLite's
        # max(rowid)); one statement with the test.
        rows = self._rows(
            "WITH total AS (SELECT COALESCE(max(seq), 0) AS n FROM memories)"
            " SELECT e.id FROM total JOIN entities e ON e.id = ANY(%s)"
            " WHERE total.n >= %s AND e.mentions > %s * total.n",
            (list(ids), min_memories, fraction),
        )
        return {r[0] for r in rows}

    def upsert_relation_mean(
        self, source_id: str, target_id: str, relation_type: str, *, confidence: float,
        strength: float | None, now: str,
    ) -> str:
        return str(self._one(
            "INSERT INTO relations AS r (id, source_entity_id, target_entity_id, relation_type,"
            " strength, mentions, confidence, created_at, updated_at)"
            " VALUES (%s,%s,%s,%s,%s,1,%s,%s,%s)"
            " ON CONFLICT (source_entity_id, target_entity_id, relation_type) DO UPDATE SET"
            " confidence = (r.confidence * r.mentions + EXCLUDED.confidence) / (r.mentions + 1),"
            " mentions = r.mentions + 1, strength = COALESCE(%s, r.strength),"
            " updated_at = EXCLUDED.updated_at RETURNING id",
            (new_id(), source_id, target_id, relation_type,
             1.0 if strength is None else strength, confidence, now, now, strength),
        ))

    def upsert_attribute(
        self, aspect_id: str, entity_id: str, key: str, value: str, *, kind: str,
        confidence: float, source_memory_id: str | None, agent_id: str, now: str,
    ) -> str:
        # One row per (aspect, kind, key, value) has no constraint to meet at (as on SQLite,
        # whose one writer serialises this): two daemons writing the same attribute take turns
        # on a transaction lock of the aspect, and the second's select sees the first's row.
        self._lock("attribute", aspect_id)
        return know_sql.upsert_attribute(
            self.conn, aspect_id, entity_id, key, value, kind=kind, confidence=confidence,
            source_memory_id=source_memory_id, agent_id=agent_id, now=now, dialect=POSTGRES)

    def decrement_entity_mentions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        rows = self._rows(
            "WITH gone AS (DELETE FROM memory_entity_mentions WHERE memory_id = ANY(%s)"
            " RETURNING entity_id) SELECT entity_id, count(*) FROM gone GROUP BY entity_id",
            (list(dict.fromkeys(memory_ids)),),
        )
        counts = {str(e): int(n) for e, n in rows}
        if not counts:
            return {"links": 0, "entities": 0, "orphans": 0}
        self.conn.execute(
            "UPDATE entities e SET mentions = greatest(0, e.mentions - d.n) FROM"
            " unnest(%s::text[], %s::int[]) AS d(id, n) WHERE e.id = d.id",
            (list(counts), list(counts.values())),
        )
        orphans = self.conn.execute(
            "DELETE FROM entities WHERE id = ANY(%s) AND mentions = 0", (list(counts),)
        ).rowcount
        return {"links": sum(counts.values()), "entities": len(counts), "orphans": orphans}

    # -- the memories the graph touches -----------------------------------------------------------
    def memory_exists(self, memory_id: str) -> bool:
        return self._one("SELECT 1 FROM memories WHERE id = %s", (memory_id,)) is not None

    def record_history(
        self, memory_id: str, event: str, actor: Actor, now: str, *, reason: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        history_id = new_id()
        self.conn.execute(
            "INSERT INTO memory_history (id, memory_id, event, old_content, new_content,"
            " changed_by, reason, metadata, actor_type, session_id, request_id, created_at,"
            " token_id) VALUES (%s,%s,%s,NULL,NULL,%s,%s,%s,%s,%s,%s,%s,%s)",
            (history_id, memory_id, event, actor.name, reason,
             dumps(metadata) if metadata is not None else None, actor.type, actor.session_id,
             actor.request_id, now, actor.token_id),
        )
        return history_id

    def allowed_ids(self, ids: Sequence[str], filters: MemoryFilters) -> set[str]:
        if not ids:
            return set()
        where, params = filter_sql(filters)
        rows = self._rows(
            f"SELECT m.id FROM memories m WHERE m.id = ANY(%s) AND {where}", [list(ids), *params]
        )
        return {r[0] for r in rows}

    # -- recall's reads ----------------------------------------------------------------------------
    def attribute_memories(self, aspect_id: str, limit: int) -> list[tuple[str, float]]:
        # The best row per memory, in index order (entity_attributes_aspect_rank).
        rows = self._rows(
            "SELECT source_memory_id, max(confidence) AS c FROM entity_attributes"
            " WHERE aspect_id = %s AND source_memory_id IS NOT NULL GROUP BY source_memory_id"
            " ORDER BY c DESC, source_memory_id LIMIT %s",
            (aspect_id, limit),
        )
        return [(r[0], float(r[1])) for r in rows]

    def live_ids(self, memory_ids: Sequence[str]) -> set[str]:
        if not memory_ids:
            return set()
        rows = self._rows(
            "SELECT id FROM memories WHERE id = ANY(%s) AND NOT is_deleted", (list(memory_ids),)
        )
        return {r[0] for r in rows}

    def memory_vectors(self, memory_ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        return pg_vectors.of_memories(self.conn, memory_ids, model)

    def entities_like(self, tokens: Sequence[str], agent_id: str, limit: int) -> list[str]:
        if not tokens:
            return []
        rows = self._rows(
            "SELECT id FROM entities WHERE agent_id = %s AND canonical_name ILIKE ANY(%s)"
            " ORDER BY mentions DESC, id LIMIT %s",
            (agent_id, [f"%{t}%" for t in tokens], limit),
        )
        return [r[0] for r in rows]

    def all_degrees(self, agent_id: str, sample: int = 1000) -> list[int]:
        count = int(self._one("SELECT count(*) FROM entities WHERE agent_id = %s", (agent_id,)) or 0)
        stride = max(1, -(-count // sample))
        rows = self._rows(
            "SELECT e.mentions"
            " + (SELECT count(*) FROM relations WHERE source_entity_id = e.id)"
            " + (SELECT count(*) FROM relations WHERE target_entity_id = e.id)"
            " + (SELECT count(*) FROM entity_dependencies WHERE source_entity_id = e.id)"
            " + (SELECT count(*) FROM entity_dependencies WHERE target_entity_id = e.id)"
            " FROM entities e WHERE e.agent_id = %s"
            f" AND {graph_read.sample_slot('e.seq', '%%')} %% %s = 0",
            (agent_id, stride),
        )
        return [int(r[0]) for r in rows]

    # -- the views ---------------------------------------------------------------------------------
    def entity_by_prefix(self, ref: str) -> str:
        return prefixes.resolve_prefix(self.conn, "entities", ref, noun="entity", dialect=POSTGRES)

    def replace_communities(
        self, agent_id: str, found: list[dict[str, Any]], now: str
    ) -> None:
        self._lock("communities", agent_id)  # two detections at once: the later one's set wins
        graph_views.replace_communities(self.conn, agent_id, found, now, dialect=POSTGRES)
