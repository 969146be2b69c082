"""Scope policy: what a scoped caller (a token bound to an agent and/or a project) may see and
where its writes land.

A memory outside the caller's scope is NotFound, never Forbidden, so its existence does not
leak; filters naming another agent or project are Forbidden (the caller named it itself), and
so is a community filter: the knowledge graph is not partitioned by scope (scoped tokens are
kept out of its routes), so resolving a community name would tell whether it exists elsewhere.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from signet.errors import Forbidden, NotFound
from signet.store import scope as scope_sql
from signet.types import Actor, MemoryFilters, MemoryScope

__all__ = ["check_scope", "scoped_filters", "scoped_write"]


def check_scope(conn: Any, memory_id: str, scope: MemoryScope | None) -> None:
    """NotFound for a memory outside `scope`; checked in SQL before the memory's row is read."""
    if scope is not None and not scope_sql.contains(conn, memory_id, scope):
        raise NotFound(f"memory {memory_id} not found")


def scoped_filters(filters: MemoryFilters, scope: MemoryScope | None) -> MemoryFilters:
    """`filters` narrowed to `scope`; Forbidden when they name another agent or project."""
    if scope is None:
        return filters
    if filters.community is not None:
        raise Forbidden("a scoped token may not filter by community (the knowledge graph is"
                        " shared across scopes)")
    for name in ("agent_id", "project"):
        allowed, asked = getattr(scope, name), getattr(filters, name)
        if allowed is not None and asked is not None and asked != allowed:
            raise Forbidden(f"this token is scoped to {name} {allowed!r}")
    return replace(
        filters, agent_id=scope.agent_id or filters.agent_id,
        project=scope.project or filters.project, isolated=True,
    )


def scoped_write(
    scope: MemoryScope, actor: Actor, fields: dict[str, Any]
) -> tuple[Actor, dict[str, Any]]:
    """A scoped caller's memory lands in its agent and project."""
    if scope.project is not None:
        if fields.get("project") not in (None, scope.project):
            raise Forbidden(f"this token may write only to project {scope.project!r}")
        fields = {**fields, "project": scope.project}
    if scope.agent_id is not None:
        actor = replace(actor, agent_id=scope.agent_id)
    return actor, fields
