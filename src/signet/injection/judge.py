"""Per-memory relevance: how likely each recalled memory is about this prompt, on its own.

The probability is a logistic model over facts about the hit among the prompt's recalled
candidates (recall's first CANDIDATES hits):

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

What goes in (`select`): nothing unless the best candidate's probability reaches
hooks.min_relevance (is the prompt about anything stored at all: this floor alone decides the
false injections); then, in recall's order, the candidates whose own probability reaches
hooks.min_memory_relevance, at most hooks.prompt_max_memories. Recall's order, not the
probability's: the cosine ranks the candidates worse than recall's fusion does, and a rule
relative to the best hit (its probability or its cosine) bought less precision per lost hit
than a smaller k.

The coefficients, the two floors and k come from `signet bench inject-fit` on the development
halves of LoCoMo and MemAware with their easy and hard negatives (fitted on everything; checked
fitted on one benchmark and judged on the other, and one LoCoMo conversation left out at a
time): the floor is the lowest that keeps the negatives' false injection within target, the
memory floor and k maximize the harmonic mean of context hit and precision on the fitted part
(every split chose k = 1 but one, which chose a memory floor that injects 1.25 lines a prompt);
docs/benchmarks.md has the figures and the trade-off. Without vectors (keyword mode, the embedder
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
    "CANDIDATES", "COEFFICIENTS", "FEATURES", "Judged", "features", "has_vectors", "judge",
    "probability", "select",
]

# How many of recall's hits are judged: the margins read the others, so this is fixed (the
# fit saw this many), whatever hooks.prompt_max_memories says.
CANDIDATES = 18

FEATURES: tuple[str, ...] = ("cosine", "margin", "lead", "coverage", "agree", "rank")
# bias first, then one weight per feature (bench: `signet bench inject-fit`).
COEFFICIENTS: tuple[float, ...] = (-6.2011, 6.4859, 2.7231, 0.0, 0.0, 0.0, 0.0)


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
