"""Conversation context: a memory's evidence spills over to its neighbours in the same session.

A turn such as "Yes, I went last week!" answers the turn before it, whose words a later query uses.
So a channel's score lifts a memory's neighbours (written just before and after by the same agent,
same session or source) by `weight` x its relative score. The lift is reported apart as `context`,
never as the memory's own evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from signet.recall.spec import CONTEXT_WEIGHT
from signet.store.neighbours import NEIGHBOUR_GAP, neighbours

__all__ = ["CONTEXT_SOURCES", "NEIGHBOUR_GAP", "lifts", "neighbours", "with_context"]

# Only the best of each channel's candidates lend context; deeper ones are weak evidence and
# each costs two index probes.
CONTEXT_SOURCES = 50

Ranking = Sequence[tuple[str, float]]


def with_context(
    ranking: Ranking, links: Mapping[str, Sequence[str]], weight: float = CONTEXT_WEIGHT
) -> list[tuple[str, float]]:
    """The ranking re-scored with each memory's best neighbour's relative score, best first.

    Scores are scaled to [0, 1] between the channel's worst and best candidate, so BM25 and cosine
    lend the same kind of lift; neighbours the channel did not find join with the lift alone."""
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
