"""The benchmarks' persistent embedding cache: same vectors back, the model asked once, and a
torn file loses nothing but its torn record."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from signet.providers.embedding_cache import CachedEmbedder
from signet.providers.hash_embedder import HashEmbedder


class Counting(HashEmbedder):
    def __init__(self, dimensions: int) -> None:
        super().__init__(dimensions)
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.asked += list(texts)
        return super().embed(texts)


def test_vectors_come_back_from_disk_without_asking_the_model(tmp_path: Path) -> None:
    inner = Counting(16)
    first = CachedEmbedder(inner, tmp_path / "cache")
    expected = first.embed(["alpha", "beta", "alpha"])
    assert inner.asked == ["alpha", "beta"]
    again = Counting(16)
    second = CachedEmbedder(again, tmp_path / "cache")
    assert np.array_equal(second.embed(["beta", "alpha"]), expected[[1, 0]])
    assert again.asked == [] and second.name == "hash" and second.dimensions == 16
    assert second.embed([]).shape == (0, 16)


def test_a_torn_append_and_a_corrupt_record_lose_only_themselves(tmp_path: Path) -> None:
    cache = CachedEmbedder(Counting(8), tmp_path)
    cache.embed(["one", "two", "three"])
    data = bytearray(cache.path.read_bytes())
    record = len(data) // 3
    data[record + 40] ^= 0xFF  # flip a byte of "two"'s vector
    cache.path.write_bytes(bytes(data) + b"half a record")
    inner = Counting(8)
    reopened = CachedEmbedder(inner, tmp_path)
    assert len(reopened) == 2
    reopened.embed(["one", "two", "three", "four"])
    assert inner.asked == ["two", "four"]
    assert len(CachedEmbedder(Counting(8), tmp_path)) == 4


def test_each_model_has_its_own_file(tmp_path: Path) -> None:
    small, wide = CachedEmbedder(Counting(8), tmp_path), CachedEmbedder(Counting(16), tmp_path)
    small.embed(["same text"])
    assert wide.embed(["same text"]).shape == (1, 16) and small.path != wide.path


def test_an_empty_cache_is_still_an_embedder_for_the_app(tmp_path: Path) -> None:
    from signet.app import SignetApp
    from signet.config import Config
    from signet.types import RecallQuery

    cache = CachedEmbedder(HashEmbedder(16), tmp_path / "cache")
    assert len(cache) == 0 and bool(cache)
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=cache) as app:
        app.remember("the staging database password rotates every month")
        app.run_pipeline_until_idle(only=["embed"])  # the vector, through the cache
        hit = app.recall(RecallQuery("staging database password", mode="vector")).hits[0]
    assert hit.evidence.semantic is not None and hit.evidence.cosine is not None
