"""MemoryFilters and MemoryScope as PostgreSQL WHERE fragments (store/memories.filter_sql's twin).

The same meaning as on SQLite, in this dialect: tags are a jsonb array tested by containment,
booleans are booleans. A filter that needs a table not yet on PostgreSQL (community: the graph)
is refused by name rather than ignored, since ignoring it would widen what a caller sees.
The community filter reads the graph's tables (migration 002_graph.sql): the memory mentions
an entity of the community, as on SQLite.
"""

from __future__ import annotations

from typing import Any

from signet.types import MemoryFilters, MemoryScope


def filter_sql(filters: MemoryFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE fragment (without the keyword) and its parameters for `filters`."""
    clauses: list[str] = []
    params: list[Any] = []
    if not filters.include_deleted:
        clauses.append(f"NOT {alias}.is_deleted")
    simple = {
        "type": filters.type, "who": filters.who, "project": filters.project,
        "agent_id": filters.agent_id, "source_id": filters.source_id,
    }
    for column, value in simple.items():
        if value is not None:
            clauses.append(f"{alias}.{column} = %s")
            params.append(value)
    for tag in filters.tags:
        clauses.append(f"{alias}.tags @> jsonb_build_array(%s::text)")
        params.append(tag)
    if filters.since is not None:
        clauses.append(f"COALESCE({alias}.event_at, {alias}.created_at) >= %s")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append(f"COALESCE({alias}.event_at, {alias}.created_at) <= %s")
        params.append(filters.until)
    if filters.pinned is not None:
        clauses.append(f"{alias}.pinned = %s")
        params.append(bool(filters.pinned))
    if filters.importance_min is not None:
        clauses.append(f"{alias}.importance >= %s")
        params.append(filters.importance_min)
    if filters.community is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM memory_entity_mentions x JOIN entities e ON e.id = x.entity_id"
            f" WHERE x.memory_id = {alias}.id AND e.community_id = %s)"
        )
        params.append(filters.community)
    return (" AND ".join(clauses) or "TRUE"), params


def scope_sql(scope: MemoryScope | None, alias: str = "m") -> tuple[str, list[Any]]:
    """The scope as a WHERE fragment: a scoped caller's statement cannot reach other rows."""
    if scope is None:
        return "TRUE", []
    return (
        f"(%s::text IS NULL OR {alias}.agent_id = %s) AND (%s::text IS NULL OR {alias}.project = %s)",
        [scope.agent_id, scope.agent_id, scope.project, scope.project],
    )
