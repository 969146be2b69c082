"""Content normalisation and hashing for deduplication. The storage form (the `content` column) is
trimmed with whitespace runs collapsed; the normalised form is that lowercased without trailing
punctuation; the hash is SHA-256 of the normalised form, or of the lowercased storage form when
normalising leaves nothing.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class NormalizedContent:
    storage: str
    normalized: str
    content_hash: str


def normalize_for_storage(text: str) -> str:
    """Trim and collapse internal whitespace runs (spaces, tabs, newlines) to one space."""
    return _WHITESPACE.sub(" ", text).strip()


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") or ch.isspace()


def derive_normalized(storage: str) -> str:
    """Lowercase the storage form and strip trailing punctuation (any Unicode P* character)."""
    lowered = storage.lower()
    end = len(lowered)
    while end > 0 and _is_punctuation(lowered[end - 1]):
        end -= 1
    return lowered[:end]


def hash_content(storage: str, normalized: str) -> str:
    basis = normalized if normalized else storage.lower()
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()


def normalize_content(text: str) -> NormalizedContent:
    storage = normalize_for_storage(text)
    normalized = derive_normalized(storage)
    return NormalizedContent(storage, normalized, hash_content(storage, normalized))
