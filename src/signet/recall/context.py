"""Conversation context: a memory's evidence spills over to its neighbours in the same session.

A turn of a conversation often carries little on its own: "Yes, I went last week!" answers a
question asked in the turn before, and the words a later query uses are in that question, not in
the answer. So recall treats memories written one after another in one conversation as
neighbours, and lets a channel's score for a memory lift its neighbours a little:

    score'(m) = score(m) + weight * max(score(n) for n in neighbours(m))

with scores taken relative to the channel's best, so the lift means the same in every channel.
The neighbour itself keeps its own evidence too; a memory that matches on its own and sits next
to a match rises above either alone.

Who counts as a neighbour is a generic rule, not a benchmark's: the memory written just before
and the one just after, by the same agent, in the same conversation — the same `session_id`, or
the same `source_id` — and only when their event times (`event_at`, else `created_at`) are at
most NEIGHBOUR_GAP apart, so the last turn of one day's conversation is not read as context for
the first turn of the next. Memories with neither a session nor a source share no conversation
with anything: two notes remembered a minute apart are not context for each other. Deleted
memories are skipped over.

The lift is context, not the channel's own evidence: recall fuses the lifted ranking but reports
a memory's lexical and semantic scores as the channels found them, and the lift apart as
`context` (`lifts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta

from signet.recall.spec import CONTEXT_WEIGHT
from signet.store.connection import Connection
from signet.types import parse_ts

NEIGHBOUR_GAP = timedelta(hours=12)
# Only the best of each channel's candidates lend context; deeper ones are weak evidence and
# each costs two index probes.
CONTEXT_SOURCES = 50

Ranking = Sequence[tuple[str, float]]

# One probe per direction and per link (session, source); a memory with neither has no
# neighbours. The closer of the two candidates in write order is the neighbour.
_SIDE = """(SELECT n.rowid || char(31) || n.id || char(31) || coalesce(n.event_at, n.created_at)
    FROM memories n WHERE n.agent_id = m.agent_id AND n.{link} = m.{link} {{project}}
      AND n.rowid {op} m.rowid AND n.is_deleted = 0 ORDER BY n.rowid {order} LIMIT 1)"""
_NEIGHBOURS = (
    "SELECT m.rowid, m.id, coalesce(m.event_at, m.created_at), "
    + ", ".join(
        _SIDE.format(link=link, op=op, order=order)
        for op, order in (("<", "DESC"), (">", "ASC"))
        for link in ("session_id", "source_id")
    )
    + " FROM memories m WHERE m.id IN ({marks})"
)


def neighbours(
    conn: Connection, ids: Iterable[str], *, same_project: bool = False
) -> dict[str, list[str]]:
    """Memory id -> the ids of its conversation neighbours (before, after), when close in time.
    `same_project`: only turns of the memory's own project count (a caller scoped to a project
    must find the neighbour it would find if other projects' turns did not exist)."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, list[str]] = {}
    project = "AND n.project IS m.project" if same_project else ""
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        sql = _NEIGHBOURS.format(marks=",".join("?" * len(chunk)), project=project)
        for rowid, memory_id, at, *sides in conn.execute(sql, chunk).fetchall():
            before = _nearest(rowid, sides[:2])
            after = _nearest(rowid, sides[2:])
            close = [n for n in (_close(at, before), _close(at, after)) if n]
            if close:
                found[memory_id] = list(dict.fromkeys(close))
    return found


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


def with_context(
    ranking: Ranking, links: Mapping[str, Sequence[str]], weight: float = CONTEXT_WEIGHT
) -> list[tuple[str, float]]:
    """The ranking re-scored with each memory's best neighbour's relative score, best first.

    Scores are first scaled to [0, 1] between the channel's worst and best candidate, so BM25
    (unbounded) and cosine (crowded near its top) lend the same kind of lift. Neighbours of
    ranked memories that the channel did not find join with the lift alone."""
    if not ranking or weight <= 0:
        return list(ranking)
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    span = high - low
    # A channel whose candidates all score alike (one candidate, say) lends full context.
    own = {m: (score - low) / span if span > 0 else 1.0 for m, score in ranking}
    lifted = dict(own)
    for memory_id, score in own.items():
        for other in links.get(memory_id, ()):
            lifted[other] = max(lifted.get(other, 0.0), own.get(other, 0.0) + weight * score)
    return sorted(lifted.items(), key=lambda item: (-item[1], item[0]))


def lifts(
    ranking: Ranking, links: Mapping[str, Sequence[str]], weight: float = CONTEXT_WEIGHT
) -> dict[str, float]:
    """Memory id -> the best relative score of a neighbour that lent it context, in [0, 1]
    (the `context` evidence: 1 = the neighbour is the channel's best match). The lift itself
    is `weight` times this."""
    if not ranking or weight <= 0:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    span = high - low
    out: dict[str, float] = {}
    for memory_id, score in ranking:
        relative = (score - low) / span if span > 0 else 1.0
        for other in links.get(memory_id, ()):
            out[other] = max(out.get(other, 0.0), relative)
    return out
