"""MemoryFilters and MemoryScope as PostgreSQL WHERE fragments.

The filters are store/memories.py `filter_sql` in the PostgreSQL dialect (store/dialect.py):
tags are a jsonb array tested by containment, booleans are booleans.
"""

from __future__ import annotations

from typing import Any

from signet.store import memories
from signet.store.dialect import POSTGRES
from signet.types import MemoryFilters, MemoryScope


def filter_sql(filters: MemoryFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE fragment (without the keyword) and its parameters for `filters`."""
    return memories.filter_sql(filters, alias, POSTGRES)


def scope_sql(scope: MemoryScope | None, alias: str = "m") -> tuple[str, list[Any]]:
    """The scope as a WHERE fragment: a scoped caller's statement cannot reach other rows."""
    if scope is None:
        return "TRUE", []
    return (
        f"(%s::text IS NULL OR {alias}.agent_id = %s) AND (%s::text IS NULL OR {alias}.project = %s)",
        [scope.agent_id, scope.agent_id, scope.project, scope.project],
    )
