"""A calibrated confidence per recall result: how likely it is to be what the query asks for.

RRF scores only rank; confidence is absolute. A logistic model over `coverage` (the IDF-weighted
share of the query's most informative stems the memory holds) and `cosine`, fitted by `signet
bench confidence`: 0.3 means about 30% of such results were gold. `AGENT_MIN_CONFIDENCE` is the
agent surfaces' default floor. Nothing heavy is imported: hooks import this module.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Fitted by `signet bench confidence` (the keyword mode and hybrid on the dev halves of LoCoMo and
# MemAware and the negative queries; docs/benchmarks.md has its held-out figures). Refit whenever
# what the features measure changes: coefficients fitted on other evidence misweigh the cosine.
WITH_COSINE = (-5.532, 4.279, 2.755)  # bias, w_cos, w_cov
WITHOUT_COSINE = (-4.102, 0.0, 3.655)  # keyword mode: coverage alone
# The floor for agent-facing surfaces, from the fit's trade-off table: with `hybrid` it removes
# 99.9% of the noise results on LoCoMo and 85% on MemAware, and drops 9.6% / 5.1% of the answers.
AGENT_MIN_CONFIDENCE = 0.03
COVERAGE_TERMS = 8

_WORD = re.compile(r"\w+", re.UNICODE)
_SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")


@dataclass(frozen=True, slots=True)
class Model:
    bias: float
    cosine: float
    coverage: float

    def __call__(self, cosine: float | None, coverage: float) -> float:
        z = self.bias + self.coverage * coverage + self.cosine * max(cosine or 0.0, 0.0)
        return 1.0 / (1.0 + math.exp(-z))


def model(with_cosine: bool) -> Model:
    return Model(*(WITH_COSINE if with_cosine else WITHOUT_COSINE))


def agent_min_confidence() -> float:
    """The default floor for agent-facing recall (MCP search, hooks)."""
    return AGENT_MIN_CONFIDENCE


# Cached: recall stems every candidate's words (50 memories of ~25 words a query), and a
# store's vocabulary repeats; the strip was 5% of a recall's time at 100k memories.
@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude suffix strip, enough to match plural and tense forms of one word."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# Cached too: the same candidates come back query after query (a store's active memories), and
# stemming each one's words again was 7% of a recall's CPU under `signet bench load`. Bounded:
# a few MB (a text and its frozen stems per entry).
@functools.lru_cache(maxsize=2048)
def stems(text: str) -> frozenset[str]:
    # map() over the cached functions: no Python frame per word (~26 words a memory).
    return frozenset(map(stem, map(str.lower, _WORD.findall(text))))


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """The query's terms, stemmed, with their IDF weights (the store's term statistics)."""

    weights: dict[str, float]
    denominator: float

    @classmethod
    def of(cls, idf: Mapping[str, float]) -> QueryTerms:
        weights: dict[str, float] = {}
        for term, weight in idf.items():
            key = stem(term)
            weights[key] = max(weights.get(key, 0.0), weight)
        top = sorted(weights.values(), reverse=True)[:COVERAGE_TERMS]
        return cls(weights, sum(top))

    def coverage(self, words: Iterable[str]) -> float:
        """IDF share of the query's most informative terms held by `words` (stems), <= 1."""
        if self.denominator <= 0:
            return 0.0
        # The query's few terms looked up in the memory's, not the memory's many in the query's.
        held_words = words if isinstance(words, (set, frozenset)) else set(words)
        held = sum(weight for term, weight in self.weights.items() if term in held_words)
        return min(held / self.denominator, 1.0)
