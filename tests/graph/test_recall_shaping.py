"""How the graph takes part in recall: the flat reservation, hub dampening, the legacy boost
fallback, and recall surviving a broken graph."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from graphs import QUERY, build_car_and_shopping, open_app, traversal_config, url_for

from signet.app import SignetApp
from signet.config import StoreConfig
from signet.graph.hubs import HubIndex, degree_threshold, hub_memories
from signet.graph.shaping import reserve_flat
from signet.store.graph_store import SqliteGraph, SqliteGraphOps
from signet.types import Evidence, Memory, RecallHit, RecallQuery


def day(i: int) -> str:
    """Memories a day apart are no conversation's neighbours, so no context lift blurs them."""
    return (date(2026, 1, 1) + timedelta(days=i)).isoformat()


def hit(memory_id: str, score: float, flat: bool) -> RecallHit:
    memory = Memory(**{**dict.fromkeys(Memory.__dataclass_fields__), "id": memory_id})
    evidence = Evidence(lexical=1.0) if flat else Evidence(traversal=1.0)
    return RecallHit(memory, score, evidence)


def test_reserve_flat_keeps_forty_percent_of_the_page_for_flat_results() -> None:
    hits = [hit(f"g{i}", 10 - i / 10, False) for i in range(10)]
    hits += [hit(f"f{i}", 5 - i / 10, True) for i in range(10)]
    page = [h.memory.id for h in reserve_flat(hits, 10, 0.4)[:10]]
    assert page == ["g0", "g1", "g2", "g3", "g4", "g5", "f0", "f1", "f2", "f3"]
    assert [h.memory.id for h in reserve_flat(hits, 10, 0.0)[:10]] == [f"g{i}" for i in range(10)]


def test_reserve_flat_lets_graph_results_fill_slots_flat_ones_cannot() -> None:
    hits = [hit(f"g{i}", 10 - i, False) for i in range(8)] + [hit("f0", 1, True)]
    page = [h.memory.id for h in reserve_flat(hits, 10, 0.4)[:10]]
    assert page[:7] == ["g0", "g1", "g2", "g3", "g4", "g5", "f0"] and len(page) == 9


def test_a_hub_entity_cannot_crowd_flat_matches_off_the_page(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """Graph-only results come after every flat match (issue 11: the reservation let them take
    60% of the page, and they pulled good flat results down)."""
    with open_app(tmp_path, embedder=False, store_url=url_for(backend, request)) as app:
        for i in range(20):
            app.remember(f"decision {i}: quarterly planning notes", type="decision",
                         graph={"entities": ["Zephyr"]}, event_at=day(i))
        flat = {app.remember(f"banana bread recipe number {i}", event_at=day(40 + i)).id
                for i in range(10)}
        response = app.recall(RecallQuery("zephyr banana", limit=10, mode="full", touch=False))
        assert {h.memory.id for h in response.hits} == flat
        response = app.recall(RecallQuery("zephyr banana", limit=20, mode="full", touch=False))
        found = [h.memory.id for h in response.hits]
        assert set(found[:10]) == flat and len(found) == 20
        assert all(h.evidence.traversal is not None for h in response.hits[10:])


def hub_graph(app: SignetApp) -> dict[str, str]:
    """Eleven entities; "User" is linked to every memory, the others to one each."""
    ids = {}
    for i in range(10):
        ids[f"m{i}"] = app.remember(
            f"note {i} about topic{i}", graph={"entities": ["User", f"Topic{i}"]}
        ).id
    ids["hub_only"] = app.remember("a general remark", graph={"entities": ["User"]}).id
    return ids


def test_memories_linked_only_to_hubs_are_dampened(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = hub_graph(app)
        conn = SqliteGraphOps(app.store.reader())
        threshold = degree_threshold(conn, "default")
        assert threshold is not None and 1 <= threshold < 11
        assert hub_memories(conn, list(ids.values()), threshold) == {ids["hub_only"]}
        assert degree_threshold(conn, "another agent") is None  # its own graph: empty
        # Brought in by the graph alone (traversal from the named hub entity): dampened.
        response = app.recall(RecallQuery("user", limit=20, mode="full", touch=False))
        top = next(h for h in response.hits if h.memory.id == ids["hub_only"])
        assert top.evidence.traversal is not None and "hub" in top.adjustments
        # Found by its own words with the graph off: its popular entities do not make it generic.
        response = app.recall(RecallQuery("general remark", limit=5, mode="hybrid", touch=False))
        top = next(h for h in response.hits if h.memory.id == ids["hub_only"])
        assert "hub" not in top.adjustments


def test_a_small_graph_has_no_hubs_and_the_threshold_is_cached(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        memory = app.remember("a general remark", graph={"entities": ["User"]}).id
        now = [0.0]
        index = HubIndex(SqliteGraph(app.store), ttl_s=30, clock=lambda: now[0])
        assert index(app.store.reader(), [memory], "default") == set()
        hub_graph(app)
        assert index.threshold(SqliteGraphOps(app.store.reader()), "default") is None  # cached
        now[0] = 31.0
        assert index.threshold(SqliteGraphOps(app.store.reader()), "default") is not None


def test_the_legacy_boost_answers_when_traversal_is_off(tmp_path: Path) -> None:
    with open_app(tmp_path, embedder=False, enabled=False) as app:
        app.remember("weekly sync notes", event_at=day(0))
        target = app.remember("moved there in the spring", event_at=day(2), graph={
            "relations": [{"source": "Berlin", "target": "Germany", "type": "capital_of"}],
        }).id
        neighbour = app.remember(
            "paperwork for the residence permit", event_at=day(4), graph={"entities": ["Germany"]}
        ).id
        response = app.recall(RecallQuery("berlin weekly", limit=10, mode="full", touch=False))
        found = [h.memory.id for h in response.hits]
        assert target in found and neighbour in found
        assert all(h.evidence.traversal is None for h in response.hits)
        hybrid = app.recall(RecallQuery("berlin weekly", limit=10, mode="hybrid", touch=False))
        assert target not in [h.memory.id for h in hybrid.hits]


def test_the_legacy_boost_answers_when_no_entity_is_named(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, embedder=False, store_url=url_for(backend, request)) as app:
        target = app.remember("moved there in the spring", graph={"entities": ["Berlin"]}).id
        response = app.recall(RecallQuery("berl", limit=10, mode="full", touch=False))
        assert [h.memory.id for h in response.hits] == [target]
        assert response.hits[0].evidence.traversal is None


def test_a_broken_graph_never_breaks_recall(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, store_url=url_for(backend, request)) as app:
        build_car_and_shopping(app)
        before = app.recall(RecallQuery(QUERY, limit=10, mode="hybrid", touch=False))
        tables = ("entity_attributes", "entity_aspects", "entity_dependencies",
                  "entity_pinning", "entity_aliases", "memory_entity_mentions")
        if backend == "postgres":
            with app.backend.core.pool.connection() as pg:  # type: ignore[attr-defined]
                pg.execute(f"DROP TABLE {', '.join(tables)}")
        else:
            with app.store.write_tx() as conn:
                for table in tables:
                    conn.execute(f"DROP TABLE {table}")
        app.graph.hubs.invalidate()
        for mode in ("full", "hybrid"):
            response = app.recall(RecallQuery(QUERY, limit=10, mode=mode, touch=False))  # type: ignore[arg-type]
            assert [h.memory.id for h in response.hits] == [h.memory.id for h in before.hits]


def test_the_boost_word_index_sees_entities_added_after_it_was_built(tmp_path: Path) -> None:
    with open_app(tmp_path, embedder=False) as app:
        first = app.remember("moved there in the spring", graph={"entities": ["East Berlin"]}).id
        assert [h.memory.id for h in app.recall(
            RecallQuery("berl", limit=10, mode="full", touch=False)).hits] == [first]
        later = app.remember("the harbour was busy", graph={"entities": ["Port of Hamburg"]}).id
        found = app.recall(RecallQuery("hamburg", limit=10, mode="full", touch=False)).hits
        assert [h.memory.id for h in found] == [later]


def test_hub_dampening_over_http(serve: Callable[..., Any], backend: str) -> None:
    served = serve()
    ids = hub_graph(served.app)
    body = served.client.post(
        "/api/memory/recall", json={"query": "user", "limit": 20, "mode": "full"}
    ).json()
    top = next(h for h in body["results"] if h["id"] == ids["hub_only"])
    assert top["evidence"]["traversal"] is not None and "hub" in top["adjustments"]
    assert body["method"] == "full"


def test_the_boost_word_index_follows_another_daemons_entities(
    tmp_path: Path, pg_url: str
) -> None:
    """Two apps on one PostgreSQL database: the entity-word index one built is rebuilt when the
    other adds an entity (the marker is read from the database on every query)."""
    def opened(name: str) -> SignetApp:
        cfg = traversal_config(tmp_path / name)
        return SignetApp.open(cfg.replace(store=StoreConfig(backend="postgres", url=pg_url)),
                              embedder=None)

    with opened("a") as one, opened("b") as two:
        first = one.remember("moved there in the spring", graph={"entities": ["East Berlin"]}).id
        assert [h.memory.id for h in one.recall(
            RecallQuery("berl", limit=10, mode="full", touch=False)).hits] == [first]
        later = two.remember("the harbour was busy", graph={"entities": ["Port of Hamburg"]}).id
        found = one.recall(RecallQuery("hamburg", limit=10, mode="full", touch=False)).hits
        assert [h.memory.id for h in found] == [later]
        assert found[0].evidence.lexical is None  # no shared word: the graph's boost found it
