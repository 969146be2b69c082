"""Recall's query vectors: an LRU cache by (model, normalised text) and a micro-batcher that
embeds concurrent misses in one call."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.errors import ProviderError
from signet.providers.hash_embedder import HashEmbedder
from signet.providers.query_embeddings import QueryEmbeddings, normalize_query
from signet.types import RecallQuery


class RecordingEmbedder:
    """The hash embedder, recording each call's texts; optionally held at its first call
    until `release` is set, so the test decides what is queued meanwhile."""

    name = "recording"
    model = "recording-hash-16"
    dimensions = 16
    inline = True

    def __init__(self, *, hold_first: bool = False, fail: bool = False) -> None:
        self.inner = HashEmbedder(self.dimensions)
        self.calls: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.hold_first = hold_first
        self.fail = fail

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.hold_first and len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self.fail:
            raise ProviderError("the embedding server is down")
        return self.inner.embed(texts)


def test_a_repeated_query_is_answered_from_the_cache() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbeddings(embedder)
    first = queries.embed("  dark   mode\n")
    again = queries.embed("dark mode")
    assert embedder.calls == [["dark mode"]]  # embedded once, as its normalised text
    assert np.array_equal(first, again)
    assert np.allclose(first, HashEmbedder(16).embed(["dark mode"])[0])
    assert (queries.stats.hits, queries.stats.misses) == (1, 1)
    queries.close()


def test_the_cache_drops_the_least_recently_used_query() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbeddings(embedder, cache_size=2)
    for text in ("alpha", "beta", "alpha", "gamma", "alpha", "beta"):
        queries.embed(text)
    # beta was the least recently used when gamma came in; alpha stayed.
    assert [c[0] for c in embedder.calls] == ["alpha", "beta", "gamma", "beta"]
    assert len(queries) == 2
    queries.close()


def test_a_cache_of_size_zero_embeds_every_query() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbeddings(embedder, cache_size=0)
    queries.embed("same")
    queries.embed("same")
    assert len(embedder.calls) == 2 and len(queries) == 0
    queries.close()


def test_queries_arriving_while_one_is_embedded_go_in_one_batch() -> None:
    embedder = RecordingEmbedder(hold_first=True)
    queries = QueryEmbeddings(embedder)
    first = queries.submit("first query")
    assert embedder.entered.wait(10)  # the batcher is busy with it
    waiting = [queries.submit(f"query {i}") for i in range(5)]
    shared = queries.submit("query 2")  # asked twice while in flight: one future, one text
    assert shared is waiting[2]
    embedder.release.set()
    vectors = [f.result(10) for f in [first, *waiting]]
    assert embedder.calls == [["first query"], [f"query {i}" for i in range(5)]]
    assert queries.stats.batches == 2 and queries.stats.largest_batch == 5
    assert all(v.shape == (16,) for v in vectors)
    queries.close()


def test_a_provider_error_reaches_every_waiter_and_is_not_cached() -> None:
    embedder = RecordingEmbedder(fail=True)
    queries = QueryEmbeddings(embedder)
    with pytest.raises(ProviderError, match="down"):
        queries.embed("anything")
    embedder.fail = False
    assert queries.embed("anything").shape == (16,)
    assert len(embedder.calls) == 2
    queries.close()


def test_normalisation_keeps_case_and_words() -> None:
    assert normalize_query(" Cafe\u0301  AU\tlait ") == "Café AU lait"


def test_recall_reuses_the_vector_of_a_query_asked_before(tmp_path: Path) -> None:
    embedder = RecordingEmbedder()
    with SignetApp.open(Config.default(tmp_path), embedder=embedder) as app:
        app.remember("the user prefers dark mode in every editor")
        asked = [c for c in embedder.calls]
        app.recall(RecallQuery("dark mode editor", mode="hybrid"))
        app.recall(RecallQuery("dark  mode editor ", mode="hybrid"))
        query_calls = [c for c in embedder.calls if c not in asked]
        assert query_calls == [["dark mode editor"]]
        assert app.recaller.query_embeddings is not None
        assert app.recaller.query_embeddings.stats.hits == 1


class ShortEmbedder(RecordingEmbedder):
    """Answers a batch with one vector too few (a broken provider or plugin) while `short`."""

    short = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed(texts)
        return vectors[: len(texts) - 1] if self.short else vectors


def test_a_provider_answering_too_few_vectors_fails_its_waiters_and_the_batcher_lives_on() -> None:
    embedder = ShortEmbedder()
    queries = QueryEmbeddings(embedder)
    with pytest.raises(ProviderError, match="1 texts gave vectors of shape"):
        queries.submit("lost query").result(10)
    embedder.short = False  # the provider recovers; the batcher must still be there
    assert queries.submit("next query").result(10).shape == (16,)
    queries.close()


def test_a_cancelled_query_leaves_the_batcher_answering_the_next() -> None:
    embedder = RecordingEmbedder(hold_first=True)
    queries = QueryEmbeddings(embedder)
    abandoned = queries.submit("abandoned query")
    assert embedder.entered.wait(10)
    assert abandoned.cancel()  # e.g. an asyncio caller's request was cancelled
    embedder.release.set()
    assert queries.submit("next query").result(10).shape == (16,)
    queries.close()


def test_search_query_cache_size_zero_turns_the_cache_off(tmp_path: Path) -> None:
    embedder = RecordingEmbedder()
    config = Config.default(tmp_path / "ws")
    config = config.replace(search=dataclasses.replace(config.search, query_cache_size=0))
    with SignetApp.open(config, embedder=embedder) as app:
        for _ in range(2):
            app.recall(RecallQuery("dark mode editor", mode="vector"))
        assert embedder.calls == [["dark mode editor"], ["dark mode editor"]]
        assert app.recaller.query_embeddings is not None
        assert app.recaller.query_embeddings.cache_size == 0
