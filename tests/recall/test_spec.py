"""The frozen recall pipeline: the Recaller is built once from one RankingSpec (recall/spec.py)
and nothing changes it afterwards; the graph's channels and hooks are in it from the start."""

from __future__ import annotations

import dataclasses

import pytest

from signet.app import SignetApp
from signet.config import Config, GraphConfig
from signet.recall.spec import BOOST_WEIGHT, SEMANTIC_WEIGHT
from signet.types import RecallQuery


def test_the_recaller_and_its_spec_refuse_mutation(app: SignetApp) -> None:
    recaller = app.recaller
    with pytest.raises(dataclasses.FrozenInstanceError):
        recaller.spec = dataclasses.replace(recaller.spec, crowding=1.0)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        recaller.transcripts = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        recaller.spec.context_weight = 0.0  # type: ignore[misc]
    with pytest.raises(TypeError):  # the weights are a read-only view
        recaller.spec.channel_weights["semantic"] = 1.0  # type: ignore[index]
    assert isinstance(recaller.spec.channels, tuple)  # no extend/append on the channels


def test_the_graph_is_in_the_spec_from_the_start_when_on(sqlite_app: SignetApp) -> None:
    app = sqlite_app
    spec = app.recaller.spec
    assert [c.name for c in spec.channels] == ["traversal", "graph_boost"]
    assert spec.channels == (app.graph.traversal, app.graph.boost)
    assert dict(spec.channel_weights) == {"semantic": SEMANTIC_WEIGHT, "graph_boost": BOOST_WEIGHT}
    assert spec.hub_memories is app.graph.hubs
    assert spec.shape is not None
    assert spec.fusion == app.config.search.fusion and spec.rrf_k == app.config.search.rrf_k
    assert app.recaller.transcripts is not None  # the lineage's, given at build


def test_with_the_graph_off_no_hub_lookup(config: Config) -> None:
    pipeline = dataclasses.replace(config.pipeline, graph=GraphConfig(enabled=False))
    with SignetApp.open(
        dataclasses.replace(config, pipeline=pipeline), embedder=None, llm=None
    ) as app:
        assert app.recaller.spec.hub_memories is None
        assert app.recaller.spec.channel_names == {"traversal", "graph_boost"}  # each finds none


def test_respec_leaves_the_built_recaller_unchanged(lexical_app: SignetApp) -> None:
    for n in range(3):
        lexical_app.remember(f"User: coupons for window {n}", source_id="long")
    lexical_app.remember("User: coupons for another slightly longer window", source_id="other")
    built = lexical_app.recaller
    uncrowded = built.respec(crowding=1.0, context_weight=0.0, source_channel=False)
    assert built.spec.crowding < 1.0 and uncrowded.spec.crowding == 1.0
    assert uncrowded.accesses is built.accesses  # one access recorder, one writer
    query = RecallQuery("coupons", limit=2, mode="keyword", touch=False)
    plain = [h.memory.source_id for h in uncrowded.recall(query).hits]
    crowded = [h.memory.source_id for h in built.respec(
        context_weight=0.0, source_channel=False
    ).recall(query).hits]
    assert plain == ["long", "long"] and crowded == ["long", "other"]
