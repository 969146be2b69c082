"""Fusion and each post-fusion dampening rule on constructed cases, and recall degrading to the
other channels (with a flag in meta) when the embedder is down."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config, DampeningConfig
from signet.errors import ProviderError
from signet.providers.hash_embedder import HashEmbedder
from signet.recall.dampen import dampen
from signet.recall.fuse import alpha_blend, rrf
from signet.types import Memory, RecallQuery


def memory(content: str, type_: str = "fact") -> Memory:
    return Memory(
        id="m", content=content, type=type_, category=None, content_hash=None,
        normalized_content=None, confidence=1.0, importance=0.5, source_id=None,
        source_type=None, tags=(), who=None, why=None, project=None, agent_id="default",
        session_id=None, created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z", event_at=None, is_deleted=False,
        deleted_at=None, extraction_status="none", embedding_model=None, extraction_model=None,
        update_count=0, version=1, last_accessed=None, access_count=0, pinned=False,
    )


def test_rrf_rewards_agreement_between_channels() -> None:
    fused = rrf({"lexical": [("a", 9.0), ("b", 5.0)], "semantic": [("b", 0.9), ("c", 0.8)]}, k=60)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["b"] > fused["a"] > fused["c"]


def test_rrf_channel_weights_scale_a_channel() -> None:
    fused = rrf({"lexical": [("a", 1.0)], "semantic": [("b", 1.0)]}, k=60, weights={"semantic": 0.3})
    assert fused["a"] == pytest.approx(1 / 61) and fused["b"] == pytest.approx(0.3 / 61)


def test_alpha_blend_mixes_scaled_scores() -> None:
    fused = alpha_blend({"semantic": [("a", 0.8), ("b", 0.4)], "lexical": [("b", 10.0)]}, alpha=0.7)
    assert fused["a"] == pytest.approx(0.7)
    assert fused["b"] == pytest.approx(0.7 * 0.5 + 0.3)


CONFIG = DampeningConfig()


def test_gravity_halves_a_close_vector_sharing_no_query_term() -> None:
    result = dampen(1.0, memory("weekly grocery budget"), query_terms={"kubernetes"},
                    content="weekly grocery budget", cosine=0.8, is_hub_only=False, config=CONFIG)
    assert result.score == pytest.approx(0.5) and result.adjustments == ("gravity",)


def test_gravity_spares_a_result_sharing_a_term_or_with_low_cosine() -> None:
    shared = dampen(1.0, memory("kubernetes budget"), query_terms={"kubernetes"},
                    content="kubernetes budget", cosine=0.8, is_hub_only=False, config=CONFIG)
    low = dampen(1.0, memory("grocery"), query_terms={"kubernetes"}, content="grocery",
                 cosine=0.2, is_hub_only=False, config=CONFIG)
    assert shared.score == low.score == 1.0


def test_hub_penalty_and_resolution_boost() -> None:
    hub = dampen(1.0, memory("plain"), query_terms=set(), content="plain", cosine=None,
                 is_hub_only=True, config=CONFIG)
    assert hub.score == pytest.approx(0.7)
    decision = dampen(1.0, memory("we chose sqlite", "decision"), query_terms=set(),
                      content="we chose sqlite", cosine=None, is_hub_only=False, config=CONFIG)
    dated = dampen(1.0, memory("launch on 2024-03-01"), query_terms=set(),
                   content="launch on 2024-03-01", cosine=None, is_hub_only=False, config=CONFIG)
    # The boost comes back apart, to be bounded with the other boosts (recall/scoring.py).
    assert decision.score == dated.score == 1.0
    assert decision.boost == dated.boost == pytest.approx(1.2)


def test_each_rule_can_be_switched_off() -> None:
    off = DampeningConfig(gravity=False, hub=False, resolution=False)
    result = dampen(1.0, memory("we chose sqlite on 2024-03-01", "decision"),
                    query_terms={"zzz"}, content="we chose sqlite on 2024-03-01", cosine=0.9,
                    is_hub_only=True, config=off)
    assert result.score == 1.0 and result.boost == 1.0 and result.adjustments == ()


class BrokenEmbedder(HashEmbedder):
    """Works for writes, then goes down (as a remote embedder would)."""

    down = False

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.down:
            raise ProviderError("embedding server is down")
        return super().embed(texts)


def test_recall_degrades_to_keyword_when_the_embedder_fails(tmp_path: Path) -> None:
    config = Config.default(tmp_path)
    config = dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline, enabled=False))
    embedder = BrokenEmbedder(64)
    with SignetApp.open(config, embedder=embedder) as app:
        app.remember("The staging cluster runs on Hetzner")
        embedder.down = True
        response = app.recall(RecallQuery("staging cluster", touch=False))
    assert [h.memory.content for h in response.hits] == ["The staging cluster runs on Hetzner"]
    assert "semantic" in response.degraded
    assert response.method.endswith("degraded")
    assert response.to_dict()["meta"]["degraded"] == ["semantic"]
