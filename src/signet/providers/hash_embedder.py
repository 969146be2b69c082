"""A deterministic embedder for tests that are not about semantics: feature hashing of words and
character trigrams, so texts sharing fragments really are closer. blake2b, not the per-process
salted `hash()`, so a text gives the same vector in every run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from hashlib import blake2b

import numpy as np

from signet.providers.rows import normalize_rows

_WORD = re.compile(r"\w+", re.UNICODE)
# Trigrams are fragments: they let "kitten" and "kittens" meet, but a whole shared word counts more.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5
# Gives the empty text (no features at all) a unit vector of its own instead of zeros.
_EMPTY_FEATURE = "\x00empty"


class HashEmbedder:
    """Feature-hashed bag of words and trigrams, L2-normalised. No model, no network."""

    name = "hash"
    inline = True

    def __init__(self, dimensions: int = 64) -> None:
        self.dimensions = dimensions
        self.model = f"hash-{dimensions}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                slot, sign = _slot(feature, self.dimensions)
                out[row, slot] += sign * weight
        return normalize_rows(out)


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    features = [(f"w:{w}", _WORD_WEIGHT) for w in words]
    for w in words:
        padded = f" {w} "
        features += [(f"t:{padded[i : i + 3]}", _TRIGRAM_WEIGHT) for i in range(len(padded) - 2)]
    return features or [(_EMPTY_FEATURE, 1.0)]


@lru_cache(maxsize=65536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return (digest >> 1) % dimensions, (1.0 if digest & 1 else -1.0)
