"""Conversation neighbours (recall/context.py's rule), read from SQLite; the choice shared. Per
direction the store finds the nearest live candidate through `session_id` and through
`source_id`; `chosen` keeps the closer in write order and drops it when more than NEIGHBOUR_GAP
away. PostgreSQL runs the same statement in its dialect.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from functools import cache

from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import parse_ts

NEIGHBOUR_GAP = timedelta(hours=12)

# One probe per direction and per link (session, source); a memory with neither has no
# neighbours. Each candidate comes packed as "<rowid>\x1f<id>\x1f<event time>" (`seq` for the
# rowid on PostgreSQL).
_SIDE = """(SELECT n.{key} || {sep} || n.id || {sep} || coalesce(n.event_at, n.created_at)
    FROM memories n WHERE n.agent_id = m.agent_id AND n.{link} = m.{link} {{project}}
      AND n.{key} {op} m.{key} AND {live} ORDER BY n.{key} {order} LIMIT 1)"""


@cache
def _select(dialect: Dialect) -> str:
    key, sep = dialect.insertion_order, dialect.char(31)
    return (
        f"SELECT m.{key}, m.id, coalesce(m.event_at, m.created_at), "
        + ", ".join(
            _SIDE.format(key=key, sep=sep, live=dialect.no("n.is_deleted"), link=link, op=op,
                         order=order)
            for op, order in (("<", "DESC"), (">", "ASC"))
            for link in ("session_id", "source_id")
        )
        + " FROM memories m WHERE {among}"
    )


def neighbours(
    conn: Executes, ids: Iterable[str], *, same_project: bool = False,
    dialect: Dialect = SQLITE,
) -> dict[str, list[str]]:
    """Memory id -> the ids of its conversation neighbours (before, after), when close in time.
    `same_project`: only turns of the memory's own project count (a caller scoped to a project
    must find the neighbour it would find if other projects' turns did not exist)."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, list[str]] = {}
    project = f"AND {dialect.same('n.project', 'm.project')}" if same_project else ""
    for start in range(0, len(wanted), 500):
        among, params = dialect.one_of("m.id", wanted[start : start + 500])
        sql = _select(dialect).format(among=among, project=project)
        for rowid, memory_id, at, *sides in conn.execute(sql, params).fetchall():
            close = chosen(int(rowid), at, sides)
            if close:
                found[memory_id] = close
    return found


def chosen(rowid: int, at: str, sides: Sequence[str | None]) -> list[str]:
    """The neighbours kept from the four packed candidates (before: session, source; after:
    session, source) of the memory at `rowid` written at `at`."""
    before = _nearest(rowid, sides[:2])
    after = _nearest(rowid, sides[2:])
    close = [n for n in (_close(at, before), _close(at, after)) if n]
    return list(dict.fromkeys(close))


def _nearest(rowid: int, packed: Sequence[str | None]) -> str | None:
    """Of the session's and the source's candidate on one side, the one closer in write order."""
    present = [p for p in packed if p is not None]
    if not present:
        return None
    best = min(present, key=lambda p: abs(int(p.split("\x1f", 1)[0]) - rowid))
    return best.split("\x1f", 1)[1]


def _close(at: str, packed: str | None) -> str | None:
    if packed is None:
        return None
    other_id, _, other_at = packed.partition("\x1f")
    try:
        gap = abs(parse_ts(at) - parse_ts(other_at))
    except ValueError:
        return None
    return other_id if gap <= NEIGHBOUR_GAP else None
