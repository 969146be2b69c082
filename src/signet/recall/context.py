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

Who is whose neighbour is read by the store (store/neighbours.py on SQLite, the PostgreSQL
recall reads beside it), and both sides choose by `store.neighbours.chosen`.

The lift is context, not the channel's own evidence: recall fuses the lifted ranking but reports
a memory's lexical and semantic scores as the channels found them, and the lift apart as
`context` (`lifts`).
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
