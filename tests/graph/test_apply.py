"""The audited graph authorship path: structured payloads sent with remember or on their own,
on both store backends (the `app` here is a SQLite app, then one on a fresh PostgreSQL
database)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from signet.app import SignetApp
from signet.errors import InvalidInput, NotFound
from signet.types import Actor


@pytest.fixture
def app(app: SignetApp, backend: str) -> SignetApp:
    """The root conftest's app, on each backend in turn (SQLite, then PostgreSQL)."""
    return app


def rows(app: SignetApp, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """One statement on the app's store, behind its back (`?` marks on either backend)."""
    if app.config.store.backend == "postgres":
        with app.backend.core.pool.connection() as conn:  # type: ignore[attr-defined]
            return [tuple(r) for r in conn.execute(sql.replace("?", "%s"), params).fetchall()]
    return [tuple(r) for r in app.store.reader().execute(sql, params).fetchall()]


CAR = {
    "entities": [
        {"name": "Ford Mustang", "type": "vehicle", "aliases": ["Mustang", "my car"]},
        "User",
    ],
    "aspects": [{"entity": "User", "aspect": "Vehicles", "description": "what the user drives"}],
    "attributes": [
        {"entity": "User", "aspect": "vehicles", "key": "owns", "value": "Ford Mustang"},
        {"entity": "Ford Mustang", "aspect": "maintenance", "key": "needs",
         "value": "air filter", "kind": "constraint", "confidence": 0.7},
    ],
    "dependencies": [{"source": "Ford Mustang", "target": "User", "type": "owned_by",
                      "strength": 0.9}],
    "relations": [{"source": "User", "target": "Ford Mustang", "type": "drives",
                   "confidence": 0.8}],
}


def test_remember_with_a_payload_writes_entities_aliases_aspects_attributes_and_edges(
    app: SignetApp,
) -> None:
    memory = app.remember("I drive a Ford Mustang", graph=CAR).id
    assert rows(app, "SELECT canonical_name, entity_type FROM entities ORDER BY 1") == [
        ("ford mustang", "vehicle"), ("user", "unknown")
    ]
    assert rows(app, "SELECT canonical_alias FROM entity_aliases ORDER BY 1") == [
        ("mustang",), ("my car",)
    ]
    assert rows(app, "SELECT aspect_name FROM entity_aspects ORDER BY 1") == [
        ("maintenance",), ("vehicles",)
    ]
    assert rows(
        app, "SELECT attribute_key, attribute_value, kind, source_memory_id FROM entity_attributes"
        " ORDER BY 1"
    ) == [("needs", "air filter", "constraint", memory), ("owns", "Ford Mustang", "attribute", memory)]
    assert rows(app, "SELECT dependency_type, strength FROM entity_dependencies") == [("owned_by", 0.9)]
    assert rows(app, "SELECT relation_type, mentions, confidence FROM relations") == [("drives", 1, 0.8)]
    linked = rows(app, "SELECT count(*) FROM memory_entity_mentions WHERE memory_id = ?", memory)
    assert linked == [(2,)]
    events = [e for e in app.history(memory) if e.event == "none"]
    assert len(events) == 1 and events[0].metadata["graph"]["entities"] == ["ford mustang", "user"]


def test_names_differing_in_case_or_punctuation_and_aliases_resolve_to_one_entity(
    app: SignetApp,
) -> None:
    app.apply_graph({"entities": [{"name": "Ford Mustang", "aliases": ["my car"]}]})
    app.apply_graph({"entities": ["FORD-MUSTANG", "ford  mustang.", "Ford Mustang's"]})
    app.apply_graph({"aspects": [{"entity": "My Car", "aspect": "maintenance"}]})
    assert rows(app, "SELECT name FROM entities") == [("Ford Mustang",)]
    assert rows(app, "SELECT e.name FROM entity_aspects a JOIN entities e ON e.id = a.entity_id") == [
        ("Ford Mustang",)
    ]


def test_unicode_names_keep_their_letters(app: SignetApp) -> None:
    app.apply_graph({"entities": ["Zoë Straße", "ZOË STRASSE", "東京タワー", "Ｔｏｋｙｏ"]})
    assert sorted(r[0] for r in rows(app, "SELECT canonical_name FROM entities")) == [
        "tokyo", "zoë strasse", "東京タワー"
    ]


def test_a_repeated_relation_counts_mentions_and_keeps_the_running_mean_confidence(
    app: SignetApp,
) -> None:
    for confidence in (0.9, 0.5, 0.4):
        app.apply_graph({"relations": [
            {"source": "Anna", "target": "Lisbon", "type": "lives_in", "confidence": confidence}
        ]})
    [(mentions, confidence)] = rows(app, "SELECT mentions, confidence FROM relations")
    assert mentions == 3 and confidence == pytest.approx(0.6)


def test_a_repeated_attribute_is_one_row_and_a_dependency_keeps_its_learned_weight(
    app: SignetApp,
) -> None:
    payload = {"attributes": [{"entity": "User", "aspect": "shopping", "key": "card",
                               "value": "Target"}],
               "dependencies": [{"source": "User", "target": "Target", "type": "shops_at",
                                 "strength": 0.4}]}
    app.apply_graph(payload)
    if app.config.store.backend == "postgres":
        rows(app, "UPDATE entity_dependencies SET traversal_weight = 2.0 RETURNING id")
    else:
        with app.store.write_tx() as conn:
            conn.execute("UPDATE entity_dependencies SET traversal_weight = 2.0")
    app.apply_graph(payload)
    assert rows(app, "SELECT count(*) FROM entity_attributes") == [(1,)]
    assert rows(app, "SELECT strength, traversal_weight FROM entity_dependencies") == [(0.4, 2.0)]


def test_apply_without_a_memory_is_recorded_under_the_graph_history_id(app: SignetApp) -> None:
    summary = app.apply_graph({"entities": ["Berlin"]}, actor=Actor(name="agent-7", type="agent"))
    assert summary["entities"] == ["berlin"]
    [(changed_by, metadata)] = rows(
        app, "SELECT changed_by, metadata FROM memory_history WHERE memory_id = 'graph'"
    )
    assert changed_by == "agent-7" and json.loads(metadata)["graph"]["entities"] == ["berlin"]


@pytest.mark.parametrize("payload", [
    [], {"nodes": []}, {"entities": "Ford"}, {"entities": [""]}, {"entities": ["!!!"]},
    {"entities": [{"name": "x" * 201}]}, {"aspects": [{"entity": "User"}]},
    {"attributes": [{"entity": "U", "aspect": "a", "key": "k", "value": "v", "kind": "rule"}]},
    {"dependencies": [{"source": "A", "target": "B", "strength": 2}]},
    {"relations": [{"source": "A", "target": "B", "confidence": True}]},
])
def test_a_bad_payload_is_refused_before_anything_is_written(
    app: SignetApp, payload: Any
) -> None:
    with pytest.raises(InvalidInput):
        app.remember("a memory that must not be written", graph=payload)
    assert rows(app, "SELECT count(*) FROM memories") == [(0,)]
    assert rows(app, "SELECT count(*) FROM entities") == [(0,)]


def test_apply_to_a_missing_memory_is_not_found(app: SignetApp) -> None:
    with pytest.raises(NotFound):
        app.apply_graph({"entities": ["Berlin"]}, memory_id="nope")
    assert rows(app, "SELECT count(*) FROM entities") == [(0,)]


def test_remember_over_http_takes_the_graph_field(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    response = served.client.post("/api/memory/remember", json={
        "content": "I drive a Ford Mustang", "graph": CAR,
    })
    assert response.status_code == 200, response.text
    stats = served.client.get("/api/knowledge/stats").json()
    assert (stats["aliases"], stats["mentions"]) == (2, 2)
    history = served.client.get(f"/api/memory/{response.json()['id']}/history").json()
    assert [e["event"] for e in history["history"]] == ["created", "none"]
    bad = served.client.post("/api/memory/remember", json={
        "content": "not written", "graph": {"entities": [""]},
    })
    assert bad.status_code == 400 and "graph.entities" in bad.json()["error"]
    assert served.client.get("/api/memories").json()["total"] == 1


def test_retention_decrement_removes_links_and_orphaned_entities_with_their_edges(
    app: SignetApp,
) -> None:
    first = app.remember("Anna moved to Lisbon", graph={
        "relations": [{"source": "Anna", "target": "Lisbon", "type": "lives_in"}],
    }).id
    second = app.remember("Anna plays the cello", graph={"entities": ["Anna"]}).id
    app.apply_graph({"entities": ["Porto"]})  # authored, no memory: not the purge's business
    with app.graph.store.writing() as graph:
        counts = graph.decrement_entity_mentions([first])
    assert counts == {"links": 2, "entities": 2, "orphans": 1}
    assert rows(app, "SELECT canonical_name, mentions FROM entities ORDER BY 1") == [
        ("anna", 1), ("porto", 0)
    ]
    assert rows(app, "SELECT count(*) FROM relations") == [(0,)]
    assert rows(app, "SELECT memory_id FROM memory_entity_mentions") == [(second,)]
