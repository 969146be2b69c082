"""Content normalisation and hashing for deduplication.

Three steps, deterministic and pure:

1. storage form: trim, and collapse every internal run of whitespace to one space. This is what
   the `content` column holds.
2. normalised form: the storage form lowercased, with trailing punctuation stripped. Two memories
   that differ only in case or a final full stop share it.
3. hash: SHA-256 (hex) of the normalised form; when normalisation leaves nothing (the content was
   only punctuation), the hash falls back to the lowercased storage form so such content still
   has a stable, distinct hash.
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
