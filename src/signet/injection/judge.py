"""Per-memory relevance: how likely each recalled memory is about this prompt, on its own.

The prompt hook injects a memory only when its own probability of being relevant reaches
hooks.min_relevance, so a prompt gets 0..k memories and never "the prompt passed, fill the
slots". The probability is a logistic model over facts about the hit among the prompt's
recalled candidates (recall's first hits):

- `cosine`: the prompt's cosine to the memory (the bundled model's scale);
- `margin`: that cosine above the median of the other candidates' (how far the hit stands out
  of what any prompt finds in this store: a big store's background is high, a small one's low,
  and a store of one memory has none).

Four more facts are computed and kept by the benchmark (`--rows`) but weigh nothing: the lead
over the best other candidate, the share of the prompt's informative words the memory holds,
whether a lexical and a dense channel both found it, and its rank. Fitted with them, the model
did better on the benchmark it was fitted on and worse on the other (coverage grows with a
memory's length: MemAware's long windows hold more of any prompt's words than LoCoMo's turns),
so they are left at 0 until they hold up held out.

The coefficients and the floor come from `signet bench inject-fit` on the development halves
of LoCoMo and MemAware with their easy and hard negatives (fitted on everything; checked fitted
on one benchmark and judged on the other, and one LoCoMo conversation left out at a time):
docs/benchmarks.md, "What the prompt hook injects". Without vectors (keyword mode, the embedder
down) no hit has a cosine, and recall's own calibrated confidence (coverage only) is the
probability, against its own floor (hooks.min_keyword_confidence): that model's scale is not
this one's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from signet.types import RecallHit

__all__ = [
    "COEFFICIENTS", "FEATURES", "Judged", "features", "has_vectors", "judge", "probability",
]

FEATURES: tuple[str, ...] = ("cosine", "margin", "lead", "coverage", "agree", "rank")
# bias first, then one weight per feature (bench: `signet bench inject-fit`).
COEFFICIENTS: tuple[float, ...] = (-6.227, 6.5219, 2.2555, 0.0, 0.0, 0.0, 0.0)


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
