"""Per-memory relevance: how likely a recalled memory is about this prompt, on its own.

A logistic model over the prompt's cosine to the memory and its margin above the other candidates'
median (other features weigh 0: they did not hold up across benchmarks), fitted by `signet bench
inject-fit`. `select` injects nothing unless the best reaches hooks.min_relevance, then those
reaching hooks.min_memory_relevance. Without vectors: recall's confidence against
hooks.min_keyword_confidence.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from signet.types import RecallHit

__all__ = [
    "CANDIDATES", "COEFFICIENTS", "FEATURES", "Judged", "features", "has_vectors", "judge",
    "probability", "select",
]

# How many of recall's hits are judged: the margins read the others, so this is fixed (the
# fit saw this many), whatever hooks.prompt_max_memories says.
CANDIDATES = 18

FEATURES: tuple[str, ...] = ("cosine", "margin", "lead", "coverage", "agree", "rank")
# bias first, then one weight per feature (bench: `signet bench inject-fit`).
COEFFICIENTS: tuple[float, ...] = (-6.2135, 6.5049, 2.7201, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Judged:
    hit: RecallHit
    features: tuple[float, ...]
    probability: float


def has_vectors(hits: Sequence[RecallHit]) -> bool:
    """Whether any hit carries a cosine (else recall ran without vectors)."""
    return any(h.evidence.cosine is not None for h in hits)


def judge(hits: Sequence[RecallHit],
          coefficients: Sequence[float] = COEFFICIENTS) -> list[Judged]:
    """Every hit with its features and probability of being relevant, in recall's order."""
    rows = features(hits)
    if not has_vectors(hits):
        return [Judged(h, f, h.confidence) for h, f in zip(hits, rows, strict=True)]
    return [Judged(h, f, probability(f, coefficients)) for h, f in zip(hits, rows, strict=True)]


def select(judged: Sequence[Judged], floor: float, memory_floor: float, limit: int
           ) -> list[Judged]:
    """What goes in: none unless the best probability reaches `floor`; then, in recall's
    order, each whose own probability reaches `memory_floor` (the best always does), at most
    `limit`."""
    if not judged or limit <= 0:
        return []
    best = max(j.probability for j in judged)
    if best < floor:
        return []
    own = min(memory_floor, best)
    return [j for j in judged if j.probability >= own][:limit]


def probability(row: Sequence[float], coefficients: Sequence[float] = COEFFICIENTS) -> float:
    z = coefficients[0] + sum(w * x for w, x in zip(coefficients[1:], row, strict=True))
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


def features(hits: Sequence[RecallHit]) -> list[tuple[float, ...]]:
    """FEATURES of each hit among `hits` (recall's candidates for one prompt, best first)."""
    cosines = [h.evidence.cosine or 0.0 for h in hits]
    out: list[tuple[float, ...]] = []
    for index, hit in enumerate(hits):
        others = cosines[:index] + cosines[index + 1:]
        cosine = cosines[index]
        e = hit.evidence
        lexical = e.lexical is not None or e.source is not None
        dense = e.semantic is not None or e.source_semantic is not None
        out.append((
            cosine,
            cosine - (statistics.median(others) if others else 0.0),
            cosine - (max(others) if others else 0.0),
            e.coverage or 0.0,
            float(lexical and dense),
            math.log1p(index),
        ))
    return out
