"""Post-fusion corrections, applied before the sort.

- gravity: a high-cosine result sharing no query term sits near every query (`gravity_factor`).
- hub: a result whose linked entities are all graph hubs says little specific (`hub_factor`).
- superseded: a memory a later one replaced stays findable, below what is current.
- resolution: constraints, decisions and dated memories resolve questions; returned apart as
  `boost` so recall bounds it with the other boosts (recall/scoring.py).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from signet.config import DampeningConfig
from signet.types import Memory

# Every form starts with a digit or a month's first letter: the lookahead refuses the other
# words before the alternatives are tried one by one (half the cost of a search, same matches).
_DATE = re.compile(
    r"\b(?=[\djfmasond])"
    r"(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|"
    r"oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?|\d{1,2}(?:st|nd|rd|th)? "
    r"(?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?:,? \d{4})?|"
    r"(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
RESOLVING_TYPES = frozenset({"constraint", "decision"})
# A replaced memory's score is multiplied by this: far below any current match, still listed.
SUPERSEDED_FACTOR = 0.3


@dataclass(frozen=True, slots=True)
class Dampened:
    """`score` after the demotions (gravity, hub); `boost` the resolution factor, applied by
    the caller with the other boosts under one bound (recall/scoring.py)."""

    score: float
    adjustments: tuple[str, ...]
    boost: float = 1.0


_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> set[str]:
    # Computed only for high-cosine candidates (the gravity check), never for every result.
    return {w.lower() for w in _WORD.findall(text)}


_DIGIT = re.compile(r"\d")


# Cached: one regex search over a candidate's whole content, for the same candidates query after
# query (6% of a recall's CPU under `signet bench load`); a bool per entry, the text is the key.
@functools.lru_cache(maxsize=2048)
def is_date_anchored(content: str) -> bool:
    # Every form _DATE matches holds a digit; most memories hold none, and finding that is
    # a tenth of the cost of trying _DATE's alternatives at every word.
    return _DIGIT.search(content) is not None and _DATE.search(content) is not None


def dampen(
    score: float,
    memory: Memory,
    *,
    query_terms: set[str],
    content: str,
    cosine: float | None,
    is_hub_only: bool,
    config: DampeningConfig,
) -> Dampened:
    adjustments: list[str] = []
    if (
        config.gravity
        and cosine is not None
        and cosine >= config.gravity_cosine
        and query_terms
        and not (query_terms & _words(content))
    ):
        score *= config.gravity_factor
        adjustments.append("gravity")
    if config.hub and is_hub_only:
        score *= config.hub_factor
        adjustments.append("hub")
    if memory.superseded_by is not None:
        score *= SUPERSEDED_FACTOR
        adjustments.append("superseded")
    boost = 1.0
    if config.resolution and memory.superseded_by is None and (
        memory.type in RESOLVING_TYPES or is_date_anchored(memory.content)
    ):
        boost = config.resolution_factor
        adjustments.append("resolution")
    return Dampened(score, tuple(adjustments), boost)
