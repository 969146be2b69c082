"""Short ids: a prefix of 4 to 31 hex characters that starts exactly one row's id stands for it (the
CLI prints 8), looked up as a range on the primary key. A memory prefix is resolved inside the
caller's scope, so a scoped token learns nothing of other memories, not even an ambiguity.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from signet.errors import InvalidInput, NotFound
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import MemoryScope

__all__ = ["resolve_prefix", "resolve_with"]

TABLES = frozenset({"memories", "memory_jobs", "entities", "memory_review_queue"})
MAX_LISTED = 10
_PREFIX = re.compile(r"^[0-9a-f]{4,31}$")


def resolve_prefix(
    conn: Executes, table: str, ref: str, *, noun: str, scope: MemoryScope | None = None,
    dialect: Dialect = SQLITE,
) -> str:
    """The one id of `table` that starts with `ref`, or `ref` unchanged when it is no prefix.

    NotFound when no id starts with it; InvalidInput (code `ambiguous_id`, `candidates` in
    its details) when several do.
    """
    if table not in TABLES:
        raise ValueError(f"no short ids for table {table}")
    return resolve_with(
        lambda prefix: _ids_with_prefix(conn, table, prefix, scope, dialect), ref, noun)


def resolve_with(lookup: Callable[[str], list[str]], ref: str, noun: str) -> str:
    """`resolve_prefix` over any store: `lookup(prefix)` returns up to MAX_LISTED + 1 ids
    starting with the prefix, in order (the PostgreSQL graph's entities use it)."""
    prefix = ref.strip().lower()
    if not _PREFIX.match(prefix):
        return ref
    found = lookup(prefix)
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFound(f"{noun} {ref} not found")
    many = len(found) > MAX_LISTED
    listed = ", ".join(found[:MAX_LISTED]) + (", ..." if many else "")
    count = f"more than {MAX_LISTED}" if many else str(len(found))
    raise InvalidInput(
        f"{noun} id {ref} is ambiguous: it starts {count} ids ({listed}); give more characters",
        code="ambiguous_id", details={"candidates": found[:MAX_LISTED]},
    )


def _ids_with_prefix(
    conn: Executes, table: str, prefix: str, scope: MemoryScope | None, dialect: Dialect
) -> list[str]:
    mark, text = dialect.mark, dialect.text_mark
    where = f"id >= {mark} AND id < {mark}"
    params: list[str | None] = [prefix, prefix + "~"]
    if scope is not None and table == "memories":
        where += (f" AND ({text} IS NULL OR agent_id = {mark})"
                  f" AND ({text} IS NULL OR project = {mark})")
        params += [scope.agent_id, scope.agent_id, scope.project, scope.project]
    rows = conn.execute(
        f"SELECT id FROM {table} WHERE {where} ORDER BY id LIMIT {mark}", (*params, MAX_LISTED + 1)
    ).fetchall()
    return [str(r[0]) for r in rows]
