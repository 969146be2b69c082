"""Source pooling: memories cut from one source (a session, a document) are evidence together.

A long conversation or document is stored as several memories that share a `source_id` (the
windows of one chat session, the chunks of one file). A query's words are often spread over
them: one window names the car, another the coupons. Ranked one by one, no single window holds
enough of the query to rank well; taken together, the source does. So, per channel:

- pool: a source's evidence is the sum of its members' scores, discounted by position
  (best + POOL_DECAY x second + POOL_DECAY^2 x third ...), which behaves like BM25 over the whole
  source without letting a very long source win on length alone; the source's best member
  carries that pooled score, the others keep their own;
- crowd: in the final list the n-th memory from a source already shown is damped by
  CROWDING^n, so ten windows of one session do not push every other source out of the results.

Memories without a source_id are their own source: for them nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from signet.store.connection import Connection

POOL_DECAY = 0.5
CROWDING = 0.7
# Channels fetch this many candidates when pooling, so a source's weaker members are seen too.
POOL_DEPTH = 400

Ranking = Sequence[tuple[str, float]]


def sources(conn: Connection, ids: Iterable[str]) -> dict[str, str]:
    """Memory id -> source_id, for the memories that have one."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = conn.execute(
            f"SELECT id, source_id FROM memories WHERE id IN ({','.join('?' * len(chunk))}) "
            "AND source_id IS NOT NULL",
            chunk,
        ).fetchall()
        found.update({r[0]: r[1] for r in rows})
    return found


def pooled(ranking: Ranking, source_of: Mapping[str, str], decay: float = POOL_DECAY) -> list[
    tuple[str, float]
]:
    """The ranking with each source's best member scored by the decayed sum of its members."""
    seen: dict[str, int] = {}
    total: dict[str, float] = {}
    leader: dict[str, str] = {}
    for memory_id, score in sorted(ranking, key=lambda item: -item[1]):
        source = source_of.get(memory_id)
        if source is None:
            continue
        position = seen.get(source, 0)
        seen[source] = position + 1
        total[source] = total.get(source, 0.0) + score * decay**position
        leader.setdefault(source, memory_id)
    best = {memory_id: total[source] for source, memory_id in leader.items()}
    rescored = [(m, best.get(m, s)) for m, s in ranking]
    return sorted(rescored, key=lambda item: (-item[1], item[0]))


def crowded(
    scored: Sequence[tuple[str, float]], source_of: Mapping[str, str], factor: float = CROWDING
) -> list[tuple[str, float]]:
    """Scores (best first) with the n-th later member of a shown source damped by factor^n."""
    shown: dict[str, int] = {}
    out = []
    for memory_id, score in scored:
        source = source_of.get(memory_id)
        if source is not None:
            count = shown.get(source, 0)
            shown[source] = count + 1
            score *= factor**count
        out.append((memory_id, score))
    return sorted(out, key=lambda item: (-item[1], item[0]))
