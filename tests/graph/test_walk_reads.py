"""Traversal's two bounded reads (store/graph_read.py) return what a full read and sort would,
while reading only the first rows in index order (migration 009)."""

from __future__ import annotations

import random
from pathlib import Path

from graphs import open_app

from signet.store import graph_read


def _reference_edges(conn, entity: str, min_strength: float, limit: int) -> list[str]:
    rows = conn.execute(
        "SELECT id, other, strength * traversal_weight AS rank FROM ("
        " SELECT id, target_entity_id AS other, strength, traversal_weight"
        " FROM entity_dependencies WHERE source_entity_id = ? AND strength >= ?"
        " UNION ALL SELECT id, source_entity_id, strength, traversal_weight"
        " FROM entity_dependencies WHERE target_entity_id = ? AND strength >= ?)"
        " WHERE other != ? ORDER BY rank DESC, id LIMIT ?",
        (entity, min_strength, entity, min_strength, entity, limit),
    ).fetchall()
    return [r[0] for r in rows]


def _reference_attributes(conn, aspect: str, limit: int) -> list[tuple[str, float]]:
    rows = conn.execute(
        "SELECT source_memory_id, max(confidence) FROM entity_attributes WHERE aspect_id = ?"
        " AND source_memory_id IS NOT NULL GROUP BY source_memory_id"
        " ORDER BY max(confidence) DESC, source_memory_id LIMIT ?",
        (aspect, limit),
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def test_bounded_reads_match_a_full_sort(tmp_path: Path) -> None:
    rng = random.Random(5)
    with open_app(tmp_path, embedder=False) as app:
        names = [f"Node{i}" for i in range(12)]
        memories = [app.remember(f"memory number {i}").id for i in range(15)]
        app.apply_graph({
            "entities": names,
            "dependencies": [
                {"source": rng.choice(names), "target": rng.choice(names),
                 "type": f"t{i}", "strength": round(rng.random(), 2)}
                for i in range(80)
            ],
            "attributes": [
                {"entity": "Node0", "aspect": "facts", "key": f"k{i}", "value": str(i),
                 "confidence": round(rng.random(), 1)}
                for i in range(40)
            ],
        })
        with app.store.write_tx() as conn:
            for row, (attribute,) in enumerate(conn.execute("SELECT id FROM entity_attributes").fetchall()):
                conn.execute(
                    "UPDATE entity_attributes SET source_memory_id = ? WHERE id = ?",
                    (memories[row % len(memories)], attribute),
                )
        conn = app.store.reader()
        assert conn.execute("SELECT count(*) FROM entity_dependencies").fetchone()[0] > 40
        assert conn.execute("SELECT count(*) FROM entity_attributes").fetchone()[0] == 40
        entities = [r[0] for r in conn.execute("SELECT id FROM entities")]
        for entity in entities:
            for min_strength, limit in ((0.0, 3), (0.4, 5), (0.9, 10)):
                got = graph_read.dependency_edges(conn, entity, min_strength=min_strength, limit=limit)
                assert [e.id for e in got] == _reference_edges(conn, entity, min_strength, limit)
        (aspect,) = conn.execute("SELECT id FROM entity_aspects").fetchone()
        for limit in (1, 4, 20):
            assert graph_read.attribute_memories(conn, aspect, limit) == _reference_attributes(
                conn, aspect, limit
            )
