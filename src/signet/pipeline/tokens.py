"""Word tokens for the pipeline's cheap comparisons: lowercase words and numbers, "doesn't" one
token (the negation check needs it), a stem that drops only a plural or third-person "s". Stop
words are removed lightly; negations and antonyms never are.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "content_tokens", "normalize_text", "stem", "words"]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_TRAILING_PUNCT = re.compile(r"[\s.!?,;:]+$")

STOP_WORDS = frozenset(
    """
    a an the this that these those it its it's of to in into at by for from with as and or but
    so if then than is are was were be been being am do does did has have had having i me my
    mine we us our you your he him his she her they them their there here which who whom whose
    what when where while about also just very really too can could would should shall may might
    must will 's
    """.split()
)


def words(text: str) -> list[str]:
    """Lowercase word tokens of `text`, stop words included, before stemming."""
    folded = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return [w[:-2] if w.endswith("'s") else w for w in _WORD.findall(folded)]


def stem(word: str) -> str:
    """Drop a plural / third-person "s"; leave short words and "-ss"/"-us"/"-is" alone."""
    if len(word) <= 3 or "'" in word:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens without stop words, in order (duplicates kept)."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS]


def normalize_text(text: str) -> str:
    """Lowercase, collapse whitespace, drop trailing punctuation: equal means same statement."""
    return _TRAILING_PUNCT.sub("", " ".join(text.lower().split()))
