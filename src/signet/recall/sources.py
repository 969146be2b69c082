"""Whole-source evidence in recall: the source channel, and one representative per source. A
session's or document's evidence must be carried by the same member in every channel, or RRF
splits it into half-results: the member the channels already rank best, else the first passing
the filters. It takes the source channel's score and, in each pooled channel, the source's best
score there (max pooling); crowding (recall/pooling.py) keeps the other members from filling the
list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from signet.store import sources as source_sql
from signet.store.recall_reads import RecallReader
from signet.types import MemoryFilters

Ranking = list[tuple[str, float]]
SourceKey = source_sql.SourceKey  # (agent, project, source id)


def representatives(
    rankings: Mapping[str, Ranking],
    key_of: Mapping[str, SourceKey],
    weights: Mapping[str, float],
    k: int,
) -> dict[SourceKey, str]:
    """Each source's best-ranked member across the channels (RRF contribution)."""
    contribution: dict[SourceKey, dict[str, float]] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 1.0)
        for rank, (memory_id, _score) in enumerate(ranking, start=1):
            key = key_of.get(memory_id)
            if key is not None:
                members = contribution.setdefault(key, {})
                members[memory_id] = members.get(memory_id, 0.0) + weight / (k + rank)
    return {
        key: max(members, key=lambda m: (members[m], m)) for key, members in contribution.items()
    }


def max_pooled(ranking: Ranking, key_of: Mapping[str, SourceKey], rep: Mapping[SourceKey, str]) -> Ranking:
    """The ranking with each representative scored by its source's best member."""
    best: dict[SourceKey, float] = {}
    for memory_id, score in ranking:
        key = key_of.get(memory_id)
        if key is not None and score > best.get(key, float("-inf")):
            best[key] = score
    out = []
    for memory_id, score in ranking:
        key = key_of.get(memory_id)
        if key is not None and rep.get(key) == memory_id:
            score = best[key]
        out.append((memory_id, score))
    present = {memory_id for memory_id, _ in ranking}
    for key, score in best.items():
        leader = rep.get(key)
        if leader is not None and leader not in present:
            out.append((leader, score))
    return sorted(out, key=lambda item: (-item[1], item[0]))


def source_ranking(
    reader: RecallReader,
    hits: Sequence[source_sql.SourceHit],
    rep: dict[SourceKey, str],
    filters: MemoryFilters,
) -> Ranking:
    """The source channel as memories: each ranked source through its representative."""
    missing = [h for h in hits if h.key not in rep]
    if missing:
        rep.update(reader.source_representatives(missing, filters))
    out = []
    for hit in hits:
        leader = rep.get(hit.key)
        if leader is not None:
            out.append((leader, hit.score))
    return out
