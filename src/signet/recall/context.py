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
and the one just after, by the same agent in the same session (`session_id`, where a missing
session is one session of its own), and only when their event times (`event_at`, else
`created_at`) are at most NEIGHBOUR_GAP apart, so the last turn of one day's conversation is not
read as context for the first turn of the next. Deleted memories are skipped over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta

from signet.store.connection import Connection
from signet.types import parse_ts

NEIGHBOUR_GAP = timedelta(hours=12)
CONTEXT_WEIGHT = 0.5
# Only the best of each channel's candidates lend context; deeper ones are weak evidence and
# each costs two index probes.
CONTEXT_SOURCES = 50

Ranking = Sequence[tuple[str, float]]

_NEIGHBOURS = """
SELECT m.id, coalesce(m.event_at, m.created_at),
  (SELECT n.id || char(31) || coalesce(n.event_at, n.created_at) FROM memories n
    WHERE n.agent_id = m.agent_id AND n.session_id IS m.session_id {project} AND n.rowid < m.rowid
      AND n.is_deleted = 0 ORDER BY n.rowid DESC LIMIT 1),
  (SELECT n.id || char(31) || coalesce(n.event_at, n.created_at) FROM memories n
    WHERE n.agent_id = m.agent_id AND n.session_id IS m.session_id {project} AND n.rowid > m.rowid
      AND n.is_deleted = 0 ORDER BY n.rowid ASC LIMIT 1)
FROM memories m WHERE m.id IN ({marks})
"""


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
        for memory_id, at, before, after in conn.execute(sql, chunk).fetchall():
            close = [n for n in (_close(at, before), _close(at, after)) if n]
            if close:
                found[memory_id] = close
    return found


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
