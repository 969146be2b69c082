"""Writes never wait for the model: with `embedding.write_path: deferred` (the default) remember
returns after the raw write, keyword recall finds the memory at once, and the embed worker adds
the vector later, several writes in one batch. `write_path: inline` embeds before the write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.store import embeddings as emb_sql
from signet.types import RecallQuery


class RecordingEmbedder:
    """The hash embedder, recording every call's texts."""

    name = "recording"
    model = "recording-hash-32"
    dimensions = 32
    inline = True

    def __init__(self) -> None:
        self.inner = HashEmbedder(self.dimensions)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def _open(tmp_path: Path, embedder: RecordingEmbedder, write_path: str = "deferred") -> SignetApp:
    config = Config.default(tmp_path)
    config = config.replace(embedding=replace(config.embedding, write_path=write_path))
    return SignetApp.open(config, embedder=embedder)


def _has_vector(app: SignetApp, memory_id: str) -> bool:
    memory = app.get(memory_id)
    return emb_sql.has_current(app.store.reader(), memory.content_hash or "", "recording-hash-32")


def _ids(app: SignetApp, query: str, mode: str) -> list[str]:
    return [h.memory.id for h in app.recall(RecallQuery(query, mode=mode)).hits]  # type: ignore[arg-type]


def test_the_default_write_path_is_deferred(tmp_path: Path) -> None:
    assert Config.default(tmp_path).embedding.write_path == "deferred"


def test_remember_returns_unembedded_and_the_embed_worker_adds_the_vector(tmp_path: Path) -> None:
    embedder = RecordingEmbedder()
    with _open(tmp_path, embedder) as app:
        result = app.remember("the staging database runs on port 5433")
        assert result.embedded is False
        assert embedder.calls == []  # the write path never called the model
        assert not _has_vector(app, result.id)
        assert app.job_depths()["embed"]["pending"] == 1
        assert result.id not in _ids(app, "staging database port", "vector")
        asked = len(embedder.calls)  # the query's own embedding

        app.run_pipeline_until_idle(only=["embed"])

        assert _has_vector(app, result.id)
        assert embedder.calls[asked:] == [["the staging database runs on port 5433"]]
        assert _ids(app, "staging database port", "vector")[:1] == [result.id]


def test_a_memory_not_yet_embedded_is_found_lexically(tmp_path: Path) -> None:
    with _open(tmp_path, RecordingEmbedder()) as app:
        result = app.remember("Mira prefers the window seat on long flights")
        hits = app.recall(RecallQuery("window seat flights", mode="hybrid")).hits
        found = {h.memory.id: h for h in hits}
        assert result.id in found
        assert found[result.id].evidence.lexical is not None
        assert found[result.id].evidence.semantic is None  # no vector yet
        app.run_pipeline_until_idle(only=["embed"])
        hits = app.recall(RecallQuery("window seat flights", mode="hybrid")).hits
        assert {h.memory.id: h for h in hits}[result.id].evidence.semantic is not None


def test_writes_that_arrive_together_are_embedded_in_one_batch(tmp_path: Path) -> None:
    embedder = RecordingEmbedder()
    with _open(tmp_path, embedder) as app:
        texts = [f"release {n} ships the {word} feature" for n, word in
                 enumerate(["export", "import", "sync", "search", "share"])]
        for text in texts:
            app.remember(text)
        embed_worker = next(w for w in app.workers() if w.name == "embed")
        assert embed_worker.tick(app.clock.now()) is True
        assert len(embedder.calls) == 1 and sorted(embedder.calls[0]) == sorted(texts)


def test_the_write_hook_runs_once_the_job_is_committed(tmp_path: Path) -> None:
    with _open(tmp_path, RecordingEmbedder()) as app:
        seen: list[int] = []
        # What the woken worker would see: the job, committed, from another connection.
        app.memory.on_deferred = lambda: seen.append(
            app.store.reader().execute(
                "SELECT count(*) FROM memory_jobs WHERE job_type = 'embed'"
            ).fetchone()[0]
        )
        app.remember("the cat is called Biscuit")
        app.remember_many([{"content": "the dog is called Pepper"}])
        assert seen == [1, 2]


def test_write_path_inline_stores_the_vector_with_the_write(tmp_path: Path) -> None:
    embedder = RecordingEmbedder()
    with _open(tmp_path, embedder, write_path="inline") as app:
        woken: list[bool] = []
        app.memory.on_deferred = lambda: woken.append(True)
        result = app.remember("the staging database runs on port 5433")
        assert result.embedded is True and _has_vector(app, result.id)
        assert embedder.calls == [["the staging database runs on port 5433"]]
        assert "embed" not in app.job_depths() and woken == []


def test_one_tick_stores_its_vectors_in_short_transactions_each_job_with_its_vector(
    tmp_path: Path,
) -> None:
    # The writer lock is every request's too: a tick stores a backlog chunk by chunk (a write
    # waiting for the lock gets in between), and a job completes in the transaction that
    # stores its vector, so no job is ever done without it.
    from signet.workers.embed_worker import STORE_CHUNK

    embedder = RecordingEmbedder()
    with _open(tmp_path, embedder) as app:
        ids = [app.remember(f"deferred note {i} about the garden shed").id for i in range(40)]
        with app.store.write_tx() as conn:
            writer = conn
        statements: list[str] = []
        writer.set_trace_callback(statements.append)
        try:
            embed = next(w for w in app.workers() if w.name == "embed")
            assert embed.tick(app.clock.now())
        finally:
            writer.set_trace_callback(None)
        assert [len(call) for call in embedder.calls] == [40]  # one model call for the backlog
        transactions: list[list[str]] = [[]]
        for statement in statements:
            transactions[-1].append(statement)
            if statement.strip().upper() == "COMMIT":
                transactions.append([])
        work = [
            (sum("INSERT INTO embeddings" in s for s in tx),
             sum("SET status = 'completed'" in s for s in tx))
            for tx in transactions
        ]
        stores = [(vectors, done) for vectors, done in work if vectors or done]
        assert len(stores) >= 40 // STORE_CHUNK + 1
        assert all(vectors == done <= STORE_CHUNK for vectors, done in stores), stores
        assert all(_has_vector(app, memory_id) for memory_id in ids)
        assert {j.status for j in app.jobs(job_type="embed")} == {"completed"}


def test_the_embed_worker_records_its_model_on_each_memory_it_embeds(
    config: Config, backend: str, request: pytest.FixtureRequest,
) -> None:
    config = config.replace(embedding=replace(config.embedding, write_path="deferred"))
    if backend != "sqlite":
        config = config.replace(store=StoreConfig(backend="postgres",
                                                  url=request.getfixturevalue("pg_url")))
    embedder = RecordingEmbedder()
    with SignetApp.open(config, embedder=embedder) as app:
        first = app.remember("the nightly backup runs at two")
        assert app.get(first.id).embedding_model is None
        app.run_pipeline_until_idle(only=["embed"])
        assert app.get(first.id).embedding_model == "recording-hash-32"
        # The same text in another project: its vector exists already, the memory still says so.
        second = app.remember("the nightly backup runs at two", project="ops")
        app.run_pipeline_until_idle(only=["embed"])
        assert second.id != first.id
        assert app.get(second.id).embedding_model == "recording-hash-32"
