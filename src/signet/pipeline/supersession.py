"""Does a newer memory replace an older one on the same subject? By rule, without an LLM: a newer
statement marked current ("now", "no longer", "switched to") that conflicts by value or negation,
or a one-clause present statement of a single-valued attribute. Memories that merely differ may
both be true; the contradiction check sends those to review.
"""

from __future__ import annotations

import re

from signet.pipeline.contradiction import (
    detect_contradiction,
    has_temporal_supersession,
    value_conflict,
)

__all__ = ["NEGATION_CONFIDENCE", "attribute", "states_current", "supersedes"]

# The negation signal's confidence grows with the square of the word overlap (0.3 + 0.6 x^2):
# 0.6 is an overlap of about 70%, the same statement with its polarity flipped.
NEGATION_CONFIDENCE = 0.6
# Words that date or frame a claim without naming its subject.
_FRAMING = frozenset(
    "now currently today nowadays decided decide chose choose agreed agree planned plan "
    "started start going also still".split()
)


# "<owner>'s <attribute> is <value>" and "the <attribute> of <owner> is <value>"; the owner a
# capitalised name (up to three words), "the user", "the team", or a possessive pronoun; at most
# four words of attribute.
_WORD = r"[A-Za-z][\w-]*"
_NAME = r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2}"
_PRONOUN = r"(?i:my|our|your|his|her|their)"
_ATTRIBUTE = rf"{_WORD}(?:\s+{_WORD}){{0,3}}"
_VALUE = r"\s+(?i:is)\s+(?:now\s+)?(?P<value>[^,;!?]+?)\s*[.!]?\s*$"
_POSSESSIVE = re.compile(
    rf"^\s*(?:(?P<owner>{_NAME}|(?i:the\s+(?:user|team)))(?:'s|')|(?P<pronoun>{_PRONOUN}))"
    rf"\s+(?P<attr>{_ATTRIBUTE}){_VALUE}")
_OF = re.compile(
    rf"^\s*(?i:the)\s+(?P<attr>{_ATTRIBUTE})\s+of\s+(?P<owner>{_NAME}|(?i:the\s+(?:user|team)))"
    rf"{_VALUE}")
_SELF = {"my": "user", "the user": "user", "our": "we", "the team": "we"}
# Words that make the "attribute" a verb phrase or a qualifier, not a name of one.
_NOT_ATTRIBUTE = frozenset("not also still never always only".split())
_NEGATION = frozenset("not no never".split())


def attribute(text: str) -> tuple[str, str, str] | None:
    """(owner, attribute, value) of a one-clause entity-attribute statement, lowercased; None
    for anything else."""
    flat = " ".join(text.replace("\u2019", "'").split())
    if len(flat.split()) > 20:
        return None
    found = _OF.match(flat) or _POSSESSIVE.match(flat)
    if found is None:
        return None
    owner = " ".join((found["owner"] or found.groupdict().get("pronoun") or "").lower().split())
    attr, value = found["attr"].lower(), found["value"].lower().strip()
    if _NOT_ATTRIBUTE & set(attr.split()) or value.split()[0] in _NEGATION:
        return None  # "X's team is not in Berlin" names no value
    return _SELF.get(owner, owner), attr, value


def states_current(text: str) -> bool:
    """Whether the statement may replace an older one: it marks itself current, or it gives
    an entity attribute's value."""
    return has_temporal_supersession(text) or attribute(text) is not None


def supersedes(older: str, newer: str) -> bool:
    """Whether `newer` replaces `older`: a newer value of the same entity attribute, or it
    marks itself current and conflicts with it."""
    new_attr, old_attr = attribute(newer), attribute(older)
    if new_attr is not None and old_attr is not None and new_attr[:2] == old_attr[:2]:
        return new_attr[2] != old_attr[2]
    if not has_temporal_supersession(newer):
        return False
    if value_conflict(older, newer, ignore=_FRAMING):
        return True
    return any(
        s.kind == "negation" and s.confidence >= NEGATION_CONFIDENCE
        for s in detect_contradiction(older, newer)
    )
