"""Fusing ranked channels into one score.

Reciprocal rank fusion (the default) sums weight / (k + rank) over the channels, so BM25 and cosine
mix without calibration; the alpha blend of max-scaled scores is an option. RRF cannot tell a clear
lexical winner from a tie, so `dense_share` fades the dense channels by the lexical lead, except
for long prompts, whose quoted turn leads widely; `dense_lead` lets them keep the share their own
cosine lead earns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranking = Sequence[tuple[str, float]]


def rrf(rankings: Mapping[str, Ranking], k: int = 60, weights: Mapping[str, float] | None = None) -> dict[str, float]:
    fused: dict[str, float] = {}
    for channel, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(channel, 1.0)
        for rank, (memory_id, _score) in enumerate(ranking, start=1):
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (k + rank)
    return fused


DENSE = ("semantic", "source_semantic")
LEADING = ("lexical", "source")


def lead(ranking: Ranking) -> float:
    """(best - second) / best of a channel's scores; 1 for a lone match, 0 for none."""
    if not ranking:
        return 0.0
    best = ranking[0][1]
    if best <= 0:
        return 0.0
    if len(ranking) < 2:
        return 1.0
    return max(best - ranking[1][1], 0.0) / best


DENSE_MAX_SHARE = 2.0


def dense_share(
    raw: Mapping[str, Ranking], query_words: int, lexical_lead: float, max_words: int,
    dense_lead: float = 0.0,
) -> float:
    """The share (0..2) of their fixed weight the dense channels keep for this query."""
    if query_words > max_words:
        return 1.0
    share = 1.0
    leads = [lead(raw[name]) for name in LEADING if name in raw]
    if lexical_lead > 0 and leads:
        share = max(0.0, 1.0 - max(leads) / lexical_lead)
    dense = [lead(raw[name]) for name in DENSE if name in raw]
    if dense_lead > 0 and dense:
        share = max(share, min(max(dense) / dense_lead, DENSE_MAX_SHARE))
    return share


def adapted(weights: Mapping[str, float], share: float) -> dict[str, float]:
    """`weights` with the dense channels' scaled by `share` (a missing weight is 1.0)."""
    out = dict(weights)
    if share != 1.0:
        for name in DENSE:
            out[name] = out.get(name, 1.0) * share
    return out


def scaled(ranking: Ranking) -> dict[str, float]:
    """Scores divided by the channel's best (positive) score, so the best is 1.0."""
    if not ranking:
        return {}
    best = max(score for _, score in ranking)
    if best <= 0:
        return {memory_id: 0.0 for memory_id, _ in ranking}
    return {memory_id: max(score, 0.0) / best for memory_id, score in ranking}


def alpha_blend(
    rankings: Mapping[str, Ranking], alpha: float = 0.7, extra_weight: float = 0.3
) -> dict[str, float]:
    """alpha * semantic + (1 - alpha) * lexical, plus other channels at `extra_weight`."""
    weights = {"semantic": alpha, "lexical": 1.0 - alpha}
    fused: dict[str, float] = {}
    for channel, ranking in rankings.items():
        weight = weights.get(channel, extra_weight)
        for memory_id, score in scaled(ranking).items():
            fused[memory_id] = fused.get(memory_id, 0.0) + weight * score
    return fused
