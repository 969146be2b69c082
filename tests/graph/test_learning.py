"""What the graph learns from use (desire paths) and from its shape (Louvain communities)."""

from __future__ import annotations

from pathlib import Path

from graphs import QUERY, build_car_and_shopping, open_app

from signet.app import SignetApp
from signet.graph.communities import detect, quality_of
from signet.graph.desire import MAX_WEIGHT, MIN_WEIGHT
from signet.types import RecallQuery


def weights(app: SignetApp) -> tuple[float, dict[str, float]]:
    conn = app.store.reader()
    dependency = conn.execute("SELECT traversal_weight FROM entity_dependencies").fetchone()[0]
    aspects = dict(conn.execute("SELECT aspect_name, weight FROM entity_aspects").fetchall())
    return dependency, aspects


def test_useful_paths_are_reinforced_and_noisy_ones_decay_within_bounds(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = build_car_and_shopping(app)
        app.recall(RecallQuery(QUERY, limit=10, mode="full", touch=False))
        app.feedback(ids["target"], "positive")
        dependency, aspects = weights(app)
        assert dependency > 1.0 and aspects["shopping"] > 1.0 and aspects["vehicles"] == 1.0
        for _ in range(30):
            app.feedback(ids["target"], "positive")
        dependency, aspects = weights(app)
        assert dependency == MAX_WEIGHT and aspects["shopping"] == MAX_WEIGHT
        for _ in range(60):
            app.feedback(ids["target"], "negative")
        dependency, aspects = weights(app)
        assert dependency == MIN_WEIGHT and aspects["shopping"] == MIN_WEIGHT
        assert aspects["vehicles"] == 1.0


def test_a_reinforced_path_outranks_a_decayed_one(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = build_car_and_shopping(app)
        other = app.remember("Costco membership renews in March", graph={
            "attributes": [{"entity": "User", "aspect": "memberships", "key": "store",
                            "value": "Costco"}],
        }).id
        app.recall(RecallQuery(QUERY, limit=20, mode="full", touch=False))
        for _ in range(5):
            app.feedback(ids["target"], "positive")
            app.feedback(other, "negative")
        walked = app.graph.traversal.paths
        assert walked.path_to(ids["target"]) is not None
        response = app.recall(RecallQuery(QUERY, limit=20, mode="full", touch=False))
        scores = {h.memory.id: h.evidence.traversal for h in response.hits}
        assert scores[ids["target"]] > scores[other]


def test_feedback_without_a_remembered_path_moves_the_memory_s_aspects(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        ids = build_car_and_shopping(app)
        app.feedback(ids["target"], "correction", correction_text="it is a Target Circle card")
        dependency, aspects = weights(app)
        assert dependency == 1.0 and aspects["shopping"] < 1.0


def planted(app: SignetApp) -> tuple[set[str], set[str]]:
    left = [f"Left{i}" for i in range(6)]
    right = [f"Right{i}" for i in range(6)]
    deps = [{"source": a, "target": b, "type": "uses", "strength": 0.9}
            for group in (left, right) for i, a in enumerate(group) for b in group[i + 1:]]
    deps.append({"source": "Left0", "target": "Right0", "type": "uses", "strength": 0.1})
    app.apply_graph({"dependencies": deps, "entities": ["Loner"]})
    return {n.lower() for n in left}, {n.lower() for n in right}


def test_louvain_finds_the_planted_communities_and_stores_them(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        left, right = planted(app)
        found = app.graph.detect_communities()
        conn = app.store.reader()
        names = dict(conn.execute("SELECT id, canonical_name FROM entities").fetchall())
        groups = [{names[m] for m in c["member_ids"]} for c in found]
        assert sorted(groups, key=min) == [left, right]
        assert {c["quality"] for c in found} == {"moderate"} or {c["quality"] for c in found} == {"strong"}
        assert found[0]["modularity"] > 0.4
        rows = dict(conn.execute("SELECT canonical_name, community_id FROM entities").fetchall())
        assert rows["loner"] is None
        assert len({rows[n] for n in left}) == 1 and rows["left0"] != rows["right0"]
        again = app.graph.detect_communities()
        assert len(again) == 2
        assert conn.execute("SELECT count(*) FROM entity_communities").fetchone()[0] == 2


def test_community_quality_follows_modularity() -> None:
    assert [quality_of(q) for q in (0.1, 0.35, 0.7)] == ["fragmented", "moderate", "strong"]
    assert detect([], {}) == [] and detect([("a", "a", 1.0)], {}) == []
    ring = [(f"n{i}", f"n{(i + 1) % 4}", 1.0) for i in range(4)]
    assert {c.quality for c in detect(ring, {})} == {"fragmented"}
