"""`embedding.index`: the quantized index (the default) and the float32 matrix give the same
semantic channel on a real store, and both notice vectors written and forgotten by another
process's connection."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.types import RecallQuery
from write_paths import inline

TOPICS = ("kayak trip", "tax return", "garden roses", "rust compiler", "piano lesson",
          "car insurance", "birthday cake", "server outage")


def _open(config: Config, kind: str) -> SignetApp:
    chosen = dataclasses.replace(config, embedding=dataclasses.replace(config.embedding, index=kind))
    return SignetApp.open(chosen, embedder=HashEmbedder(64))


def _semantic(app: SignetApp, text: str) -> list[tuple[str, float]]:
    hits = app.recall(RecallQuery(text, mode="vector", limit=40)).hits
    return [(h.memory.id, round(h.evidence.semantic or 0.0, 5)) for h in hits]


def test_the_quantized_and_exact_indexes_rank_alike_and_follow_the_table(tmp_path: Path) -> None:
    config = inline(Config.default(tmp_path / "ws"))
    assert config.embedding.index == "quantized"
    with _open(config, "quantized") as writer:
        writer.remember_many(
            [{"content": f"note {i} about the {TOPICS[i % 8]} and {TOPICS[(i * 3) % 8]}"}
             for i in range(600)]
        )
        quantized, exact = _open(config, "quantized"), _open(config, "exact")
        try:
            assert (quantized.vectors.kind, exact.vectors.kind) == ("quantized", "exact")
            for topic in TOPICS:
                assert _semantic(quantized, topic) == _semantic(exact, topic)
            gone = quantized.recall(RecallQuery("kayak trip", mode="vector")).hits[0].memory.id
            writer.forget(gone, reason="test")
            added = writer.remember("a kayak trip down the fjord at dawn").id
            for app in (quantized, exact):
                assert gone not in [m for m, _ in _semantic(app, "kayak trip")]
                assert _semantic(app, "kayak trip down the fjord at dawn")[0][0] == added
            assert _semantic(quantized, "kayak trip") == _semantic(exact, "kayak trip")
        finally:
            quantized.close()
            exact.close()


def test_an_unknown_index_kind_is_refused_naming_the_key(tmp_path: Path) -> None:
    from signet.errors import ConfigError

    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "agent.yaml").write_text("embedding:\n  index: hnsw\n")
    with pytest.raises(ConfigError, match="embedding.index"):
        Config.load(workspace=tmp_path / "ws")


def test_the_change_marker_is_read_again_only_after_a_commit(tmp_path: Path) -> None:
    config = inline(Config.default(tmp_path / "ws"))
    with _open(config, "quantized") as app:
        app.remember_many([{"content": f"note {i} about the {TOPICS[i % 8]}"} for i in range(50)])
        statements: list[str] = []
        app.store.reader().set_trace_callback(statements.append)

        def marker_reads() -> int:
            return sum("max(id), 0), count(*) FROM embeddings" in s for s in statements)

        for topic in TOPICS[:3]:
            _semantic(app, topic)
        assert marker_reads() == 1
        added = app.remember("a kayak trip down the fjord at dawn").id
        assert _semantic(app, "kayak trip down the fjord at dawn")[0][0] == added
        assert marker_reads() == 2
