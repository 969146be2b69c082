"""Does a newer memory replace an older one on the same subject? By rule, without an LLM.

"We now use MongoDB" replaces "We decided to use PostgreSQL": the newer statement marks itself
as the current state ("now", "no longer", "switched to", "as of": contradiction.py
`has_temporal_supersession`) and it conflicts with the older one, either

- by value: the same state predicate ("use", "prefer", "live in", "work at", "the default")
  with a different object, the subjects compatible once the words that only date or frame the
  claim ("now", "decided", "currently") are set aside; or
- by negation: "we no longer use PostgreSQL" against "we use PostgreSQL" (contradiction.py's
  negation signal, strong only when the two share most of their words).

A newer statement without a marker never replaces anything here: two memories that merely
differ ("uses React", "uses Vue") may both be true, and the contradiction check of the
controlled writes (pipeline/writes.py) sends those to review instead.
"""

from __future__ import annotations

from signet.pipeline.contradiction import (
    detect_contradiction,
    has_temporal_supersession,
    value_conflict,
)

__all__ = ["NEGATION_CONFIDENCE", "supersedes"]

# The negation signal's confidence grows with the square of the word overlap (0.3 + 0.6 x^2):
# 0.6 is an overlap of about 70%, the same statement with its polarity flipped.
NEGATION_CONFIDENCE = 0.6
# Words that date or frame a claim without naming its subject.
_FRAMING = frozenset(
    "now currently today nowadays decided decide chose choose agreed agree planned plan "
    "started start going also still".split()
)


def supersedes(older: str, newer: str) -> bool:
    """Whether `newer` replaces `older`: it marks itself current and conflicts with it."""
    if not has_temporal_supersession(newer):
        return False
    if value_conflict(older, newer, ignore=_FRAMING):
        return True
    return any(
        s.kind == "negation" and s.confidence >= NEGATION_CONFIDENCE
        for s in detect_contradiction(older, newer)
    )
