"""Hints without a language model: the vocabulary words nearest to a memory's vector.

With no LLM, a fixed vocabulary (a few thousand common whole words of the bundled tokenizer's
WordPiece list, embedded once on first use) gives each memory the nearest words its content
does not already hold: words of its topic, not inferences about when it matters.
docs/pipeline.md records what it measured.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources

import numpy as np

from signet.pipeline.tokens import STOP_WORDS, stem, words
from signet.providers.embedder import Embedder

__all__ = ["VocabularyHints", "default_vocabulary"]

TOKENIZER_RESOURCE = "minilm-tokenizer.json"
FIRST_WORD_ID = 1996  # BERT uncased: whole words start here, most frequent first
SKIP_MOST_FREQUENT = 300
VOCABULARY_SIZE = 4000
EMBED_BATCH = 256
_ALPHA = re.compile(r"^[a-z]{4,14}$")


@cache
def default_vocabulary() -> tuple[str, ...]:
    """The fixed vocabulary (see the module docstring), read from the bundled tokenizer."""
    source = resources.files("signet.resources").joinpath(TOKENIZER_RESOURCE)
    vocab: dict[str, int] = json.loads(source.read_text("utf-8"))["model"]["vocab"]
    ordered = sorted((i, w) for w, i in vocab.items() if i >= FIRST_WORD_ID)
    chosen = [w for _, w in ordered if _ALPHA.match(w) and w not in STOP_WORDS]
    return tuple(chosen[SKIP_MOST_FREQUENT : SKIP_MOST_FREQUENT + VOCABULARY_SIZE])


class VocabularyHints:
    """Nearest vocabulary words to a vector; the vocabulary matrix is built on first use."""

    def __init__(self, embedder: Embedder, vocabulary: Sequence[str] | None = None) -> None:
        self.embedder = embedder
        self.vocabulary = tuple(vocabulary if vocabulary is not None else default_vocabulary())
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()  # two workers must not both embed the vocabulary

    def matrix(self) -> np.ndarray:
        """The vocabulary's vectors (one embedding pass, then cached): call outside any tx."""
        with self._lock:
            if self._matrix is None:
                parts = [
                    self.embedder.embed(list(self.vocabulary[i : i + EMBED_BATCH]))
                    for i in range(0, len(self.vocabulary), EMBED_BATCH)
                ]
                self._matrix = np.vstack(parts).astype(np.float32)
            return self._matrix

    def terms(self, vector: np.ndarray, content: str, k: int) -> list[str]:
        """The k vocabulary words nearest to `vector` that `content` does not already hold."""
        if k <= 0 or not self.vocabulary:
            return []
        scores = self.matrix() @ np.asarray(vector, dtype=np.float32).reshape(-1)
        present = {stem(w) for w in words(content)}
        order = np.argsort(-scores, kind="stable")
        chosen: list[str] = []
        for index in order:
            word = self.vocabulary[int(index)]
            if stem(word) not in present:
                chosen.append(word)
                present.add(stem(word))
                if len(chosen) == k:
                    break
        return chosen
