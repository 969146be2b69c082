"""A calibrated confidence per recall result: how likely it is to be what the query asks for.

Fused scores rank; they do not say whether anything relevant was found at all: reciprocal rank
fusion gives the best of a store with nothing about "kubernetes cluster autoscaling" the same
score as the best of a store full of it. Confidence is absolute. It reads two facts about the
result itself, each in [0, 1]:

- `coverage`: how much of the query's information its words hold: the IDF-weighted share of the
  query's most informative terms (at most COVERAGE_TERMS of them) found among the memory's words
  (a light suffix-stripping stem, so "owners" meets "owner");
- `cosine`: the cosine between the query's and the memory's vectors (its source's closest
  member for a session or document), clipped at 0; absent without an embedder.

and maps them through a logistic model fitted on labelled recall results:

    confidence = 1 / (1 + exp(-(bias + w_cos * cosine + w_cov * coverage)))

The labels: the top ten results of the default mode on the development halves of LoCoMo and
MemAware (1 when the result is a gold evidence turn or session of the question), and the results
of the queries about nothing stored in `signet/bench/negatives.json` (all 0). So a confidence of
0.3 means: among results that looked like this one on those data, about 30% were a gold answer.
Because a question usually has one or two gold results among ten (6.5% of the labelled results
are gold), the values are modest: a result holding every informative word of the query at
cosine 0.6 has 0.45, one holding none at cosine 0.3 has 0.014.

Other features were measured and left out because they did not hold up on data they were not
fitted on (docs/benchmarks.md, "The confidence floor"): whether both the lexical and the dense
channel found the result, its rank, its margin to the best result of the query, the
conversation context that lifted it, and the memory's length.
`signet bench confidence` refits the coefficients and prints the floor's trade-off
(docs/benchmarks.md).

`AGENT_MIN_CONFIDENCE` is the floor agent-facing surfaces (MCP memory_search) apply by default,
so an agent is not handed noise (the prompt hook gates on cosines, and on this confidence only
without vectors: hooks.min_relevance); people's surfaces (CLI, HTTP) show everything
unless asked (`min_confidence`). This module imports nothing heavy: hooks may import it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Fitted by `signet bench confidence` on 2026-12-01 18:30 (the keyword mode and hybrid on the
# dev halves of LoCoMo and MemAware and the negative queries; docs/benchmarks.md has the run,
# its trade-off and its held-out figures). The coefficients of 15:35 were fitted before the
# cosine took a source's closest member and before context stopped lending lexical evidence:
# against today's evidence they weighed cosine at 1.44 where it carries 4.28, which is why the
# old floor dropped a quarter of LoCoMo's true answers (answer turns close in meaning that hold
# few of the question's words). Refit whenever what the evidence measures changes.
WITH_COSINE = (-5.532, 4.279, 2.755)  # bias, w_cos, w_cov
WITHOUT_COSINE = (-4.102, 0.0, 3.655)  # keyword mode: coverage alone
# The floor for agent-facing surfaces, from that trade-off table: with `hybrid` it removes
# 99.9% of the noise results on LoCoMo and 85% on MemAware, and drops 9.6% / 5.1% of the true
# answers (the old model's 0.05: 99.6% / 79% of the noise, 19% / 12% of the answers).
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
