"""Names a prompt asks about that nothing recalled mentions.

A prompt that names things (people, places, products, tools: the names extraction finds) none
of which appears in any of recall's candidates asks about something not stored, however near
the candidates' meaning: "Who owns the PayPal integration?" against "Priya owns the payments
gateway integration", a question about Gina against a store of Caroline's conversations. The
prompt hook then injects nothing. A name is found in a candidate by any of its words, CamelCase
split, possessive and plural dropped, or sharing a prefix of five letters or more ("Postgres" in
"PostgreSQL"), and an acronym by the initials of consecutive words ("PR", "pull requests"), so a
name spelled another way still counts as mentioned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from signet.pipeline.rule_extractor import names_in

__all__ = ["names_unknown"]

_WORD = re.compile(r"\w+", re.UNICODE)
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_SKIP = frozenset({"of", "the", "and", "a", "an", "in", "on", "for", "to"})
MIN_PREFIX = 5
MAX_ACRONYM = 5


def names_unknown(prompt: str, texts: Iterable[str]) -> bool:
    """Whether `prompt` names something and none of its names is in any of `texts`."""
    names = names_in(prompt)
    if not names:
        return False
    texts = [text.lower() for text in texts]
    stems = {_stem(w) for text in texts for w in _WORD.findall(text)}
    return not any(_mentioned(name, stems) or _spelled_out(name, texts) for name in names)


def _mentioned(name: str, stems: set[str]) -> bool:
    words = [w for w in _WORD.findall(_POSSESSIVE.sub(" ", _HUMP.sub(" ", name)).lower())
             if len(w) >= 2 and w not in _SKIP]
    if not words:
        return True  # nothing to look for: no evidence either way
    for word in map(_stem, words):
        if word in stems:
            return True
        if len(word) >= MIN_PREFIX and any(
            len(s) >= MIN_PREFIX and (s.startswith(word) or word.startswith(s)) for s in stems
        ):
            return True
    return False


def _spelled_out(name: str, texts: list[str]) -> bool:
    """An acronym ("PR", "CI") written out in a text as the initials of consecutive words
    ("pull requests", "continuous integration")."""
    letters = _POSSESSIVE.sub("", name).rstrip("s") if name[:-1].isupper() else name
    if not (2 <= len(letters) <= MAX_ACRONYM and letters.isalpha() and letters.isupper()):
        return False
    initials = letters.lower()
    for text in texts:
        words = _WORD.findall(text)
        heads = "".join(w[0] for w in words)
        if initials in heads:
            return True
    return False


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word
