"""Traversal-primary recall on hand-built graphs with known answers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from graphs import QUERY, TARGET_TEXT, build_car_and_shopping, open_app, url_for

from signet.app import SignetApp
from signet.config import TraversalConfig
from signet.graph import traversal
from signet.graph.channels import boost_ids
from signet.store import fts
from signet.store.graph_store import SqliteGraphOps
from signet.types import RecallQuery


def ask(app: SignetApp, text: str, mode: str = "full", limit: int = 10) -> list[str]:
    response = app.recall(RecallQuery(text, limit=limit, mode=mode, touch=False))  # type: ignore[arg-type]
    return [h.memory.id for h in response.hits]


def via_graph(app: SignetApp, text: str) -> set[str]:
    """The memories traversal contributed to a full recall."""
    response = app.recall(RecallQuery(text, limit=20, mode="full", touch=False))
    return {h.memory.id for h in response.hits if h.evidence.traversal is not None}


def test_the_loyalty_card_surfaces_through_the_user_entity_though_it_shares_no_word(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest,
) -> None:
    with open_app(tmp_path, store_url=url_for(backend, request)) as app:
        ids = build_car_and_shopping(app)
        response = app.recall(RecallQuery(QUERY, limit=10, mode="full", touch=False))
        hits = {h.memory.id: h for h in response.hits}
        assert ids["target"] in hits
        evidence = hits[ids["target"]].evidence
        assert evidence.traversal is not None
        assert not set(fts.query_tokens(QUERY)) & set(fts.query_tokens(TARGET_TEXT))
        assert ids["car"] in hits and hits[ids["car"]].evidence.traversal is not None
        hybrid = app.recall(RecallQuery(QUERY, limit=10, mode="hybrid", touch=False))
        assert all(h.evidence.traversal is None for h in hybrid.hits)


def test_a_directly_anchored_memory_ranks_above_one_reached_through_hops(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = build_car_and_shopping(app)
        conn = SqliteGraphOps(app.store.reader())
        focal = traversal.focal_entities(conn, QUERY, "default", {})
        walked = traversal.walk(conn, focal, TraversalConfig())
        assert walked.candidates[ids["car"]].anchored
        assert not walked.candidates[ids["target"]].anchored
        ranked = dict(traversal.scored(walked, {}, None))
        assert ranked[ids["target"]] < ranked[ids["car"]]
        path = walked.candidates[ids["target"]].path
        assert [s.kind for s in path] == ["dependency", "aspect"]


def test_aliases_make_focal_entities(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = build_car_and_shopping(app)
        conn = SqliteGraphOps(app.store.reader())
        for text in ("is my car due a service", "MUSTANG oil change", "the ford-mustang's tyres"):
            focal = traversal.focal_entities(conn, text, "default", {})
            assert len(focal) == 1, text
        assert ids["target"] in via_graph(app, "is my car due a service")


def test_no_hops_stays_on_the_focal_entity(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, max_hops=0, store_url=url_for(backend, request)) as app:
        ids = build_car_and_shopping(app)
        assert via_graph(app, "Ford Mustang") == {ids["car"]}


def test_a_weak_dependency_is_not_followed(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, min_dependency_strength=0.95, store_url=url_for(backend, request)) as app:
        ids = build_car_and_shopping(app)
        assert via_graph(app, QUERY) == {ids["car"]}


def test_pinned_entities_are_always_focal_and_suppressed_ones_never(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, store_url=url_for(backend, request)) as app:
        ids = build_car_and_shopping(app)
        user = app.graph.entities(search="user")["items"][0]["id"]
        mustang = app.graph.entities(search="mustang")["items"][0]["id"]
        app.graph.pin(user)
        assert ids["target"] in via_graph(app, "dentist appointment")
        app.graph.unpin(user)
        assert via_graph(app, "dentist appointment") == set()
        app.graph.pin(mustang, suppress=True)
        assert via_graph(app, QUERY) == set()
        app.graph.pin(mustang)
        app.graph.pin(user, suppress=True)
        assert via_graph(app, "Ford Mustang") == {ids["car"]}  # never walked through the user


def chain(app: SignetApp, edges: list[tuple[str, str]], *, memory_per_entity: bool = True) -> None:
    names = sorted({n for e in edges for n in e})
    for name in names:
        app.remember(f"a note about node {name.lower()}", graph={"entities": [name]} if memory_per_entity else None)
    app.apply_graph({"dependencies": [
        {"source": a, "target": b, "type": "next", "strength": 0.9} for a, b in edges
    ]})


def test_cycles_and_self_loops_are_walked_once(tmp_path: Path) -> None:
    with open_app(tmp_path, max_hops=10) as app:
        chain(app, [("Alpha", "Beta"), ("Beta", "Gamma"), ("Gamma", "Alpha"), ("Alpha", "Alpha"),
                    ("Beta", "Beta")])
        conn = SqliteGraphOps(app.store.reader())
        focal = traversal.focal_entities(conn, "alpha", "default", {})
        walked = traversal.walk(conn, focal, TraversalConfig(max_hops=10))
        assert walked.visited == 3 and len(walked.candidates) == 3 and not walked.partial


def test_branching_and_paths_are_bounded(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        chain(app, [("Hub", f"Spoke{i}") for i in range(30)])
        conn = SqliteGraphOps(app.store.reader())
        focal = traversal.focal_entities(conn, "hub", "default", {})
        walked = traversal.walk(conn, focal, TraversalConfig(max_branching=4))
        assert walked.visited == 5
        walked = traversal.walk(conn, focal, TraversalConfig(max_branching=30, max_paths=7))
        assert walked.paths == 7 and len(walked.candidates) == 7


def test_an_exceeded_time_budget_returns_the_partial_walk(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        chain(app, [("Hub", f"Spoke{i}") for i in range(20)])
        conn = SqliteGraphOps(app.store.reader())
        focal = traversal.focal_entities(conn, "hub", "default", {})
        ticks = itertools.count()
        clock = lambda: next(ticks) / 1000.0  # noqa: E731 - one millisecond per reading
        walked = traversal.walk(conn, focal, TraversalConfig(max_branching=20, timeout_ms=5), clock=clock)
        assert walked.partial and 1 <= walked.visited < 21 and walked.candidates


def test_a_hub_with_many_mentions_reads_a_bounded_slice(tmp_path: Path) -> None:
    with open_app(tmp_path, embedder=False) as app:
        app.remember("the hub entity Everything is here", graph={"entities": ["Everything"]})
        with app.store.write_tx() as conn:
            entity = conn.execute("SELECT id FROM entities").fetchone()[0]
            conn.executemany(
                "INSERT INTO memories (id, content, content_hash, created_at, updated_at)"
                " VALUES (?, ?, ?, '2026-01-01', '2026-01-01')",
                [(f"m{i}", f"row {i}", f"h{i}") for i in range(20_000)],
            )
            conn.executemany(
                "INSERT INTO memory_entity_mentions (memory_id, entity_id, created_at)"
                " VALUES (?, ?, '2026-01-01')", [(f"m{i}", entity) for i in range(20_000)],
            )
            conn.execute("UPDATE entities SET mentions = 100000")
            aspect_memories = [f"m{i}" for i in range(0, 60, 3)]
        app.apply_graph({"attributes": [
            {"entity": "Everything", "aspect": "facts", "key": "k", "value": m}
            for m in aspect_memories
        ]})
        with app.store.write_tx() as conn:
            conn.execute(
                "UPDATE entity_attributes SET source_memory_id = attribute_value WHERE 1"
            )
        conn = SqliteGraphOps(app.store.reader())
        walked = traversal.walk(conn, [entity], TraversalConfig())
        # The hub's 20,000 links are not read; its aspect's attributes are, within their bound.
        assert len(walked.candidates) == 10 and set(walked.candidates) <= set(aspect_memories)
        assert len(conn.mention_memories(entity, 10)) == 10


def test_unicode_names_are_found_in_queries(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    with open_app(tmp_path, store_url=url_for(backend, request)) as app:
        memory = app.remember("Ein Treffen im Café", graph={"entities": ["Zoë Straße"]}).id
        assert memory in via_graph(app, "wann kommt ZOË STRASSE?")


@pytest.mark.parametrize("text", ["", "   ", "?!", "a" * 5000])
def test_odd_queries_do_not_break_traversal(tmp_path: Path, text: str) -> None:
    with open_app(tmp_path) as app:
        build_car_and_shopping(app)
        if text.strip():
            ask(app, text)
        assert traversal.query_keys(text) == ([] if not text.strip("?! ") else ["a" * 5000])


def test_an_entity_most_memories_mention_is_not_focal_unless_pinned(tmp_path: Path) -> None:
    with open_app(tmp_path, embedder=False) as app:
        build_car_and_shopping(app)
        app.remember_many([{"content": f"filler note {n} on nothing"} for n in range(300)])
        mustang = app.graph.entities(search="mustang")["items"][0]["id"]
        conn = SqliteGraphOps(app.store.reader())
        assert mustang in traversal.focal_entities(conn, QUERY, "default", {})
        boosted = set(boost_ids(conn, "mustang", "default"))
        assert boosted
        with app.store.write_tx() as wconn:
            # Mentioned by more than COMMON_ENTITY_FRACTION of the ~300 memories.
            wconn.execute("UPDATE entities SET mentions = 40 WHERE id = ?", (mustang,))
        assert mustang not in traversal.focal_entities(conn, QUERY, "default", {})
        # The legacy boost skips it too: only what its other neighbours reach is left.
        assert set(boost_ids(conn, "mustang", "default")) < boosted
        app.graph.pin(mustang)
        pins = conn.pins("default")
        assert mustang in traversal.focal_entities(conn, QUERY, "default", pins)
