"""Fusing ranked channels into one score.

Reciprocal rank fusion (the default) sums 1/(k + rank) over the channels that found a memory:
it needs no score calibration, so BM25's unbounded scores and cosine similarities mix safely.
The alpha blend (the seeds' 0.7 vector / 0.3 keyword) is kept as an option: each channel's
scores are scaled to [0, 1] by the channel's best score, then mixed linearly.
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
