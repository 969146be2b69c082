"""The graph does no harm: in mode full every result a flat channel found keeps hybrid's order,
and what only the graph found comes after every flat result; on both store backends."""

from __future__ import annotations

import pytest
from graphs import QUERY, build_car_and_shopping

from signet.app import SignetApp
from signet.graph.shaping import is_flat
from signet.types import RecallQuery


@pytest.fixture
def app(app: SignetApp, backend: str) -> SignetApp:
    """The root conftest's app, on each backend in turn (SQLite, then PostgreSQL)."""
    return app


def test_full_keeps_hybrids_order_and_adds_below_flat_matches(app: SignetApp) -> None:
    ids = build_car_and_shopping(app)
    app.remember("Ford Mustang air filter part number is CA10262")
    for text in (QUERY, "Mustang air filter", "loyalty discounts", "where can I use my car"):
        hybrid = [h.memory.id for h in app.recall(RecallQuery(text, limit=30, mode="hybrid")).hits]
        full = app.recall(RecallQuery(text, limit=30, mode="full")).hits
        flat = [h.memory.id for h in full if is_flat(h)]
        assert flat == hybrid, text
        last_flat = max((i for i, h in enumerate(full) if is_flat(h)), default=-1)
        graph_only = [i for i, h in enumerate(full) if not is_flat(h)]
        assert all(i > last_flat for i in graph_only), text
        assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)
    found = app.recall(RecallQuery(QUERY, limit=10, mode="full")).hits
    assert ids["target"] in [h.memory.id for h in found]


def test_full_keeps_hybrids_order_over_whole_sources(app: SignetApp) -> None:
    """Windows of one session: the graph must not choose which window carries the session."""
    mustang = {"entities": [{"name": "Ford Mustang", "type": "vehicle", "aliases": ["Mustang"]}]}
    for s in range(4):
        app.remember(f"session {s}: the air filter of the car and the garage visit",
                     source_id=f"s{s}")
        app.remember(f"session {s}: bought it last spring, drove to the lake", source_id=f"s{s}",
                     graph=mustang)
        app.remember(f"session {s}: the Mustang needs new tyres soon", source_id=f"s{s}")
    for text in ("Mustang air filter", "Ford Mustang garage", "where did I drive the Mustang"):
        hybrid = [h.memory.id for h in app.recall(RecallQuery(text, limit=30, mode="hybrid")).hits]
        full = app.recall(RecallQuery(text, limit=30, mode="full")).hits
        assert [h.memory.id for h in full if is_flat(h)] == hybrid, text
