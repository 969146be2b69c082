"""A memory replaced by a later one on the same subject is not current: the extraction worker
links it to its replacement (no LLM), recall damps it below the replacement, MEMORY.md leaves it
out. Through the real pipeline, recall and synthesis, with the bundled model, on both backends."""

from __future__ import annotations

from pathlib import Path

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.types import RecallQuery

OLD = "We decided to use PostgreSQL"
NEW = "we now use MongoDB"
OTHERS = (
    "The deployment pipeline runs on GitHub Actions",
    "The billing service is written in Go",
    "My cat is named Whiskers",
)


def test_a_replaced_decision_is_out_of_recalls_top_and_of_memory_md(
    tmp_path: Path, backend_store: StoreConfig
) -> None:
    config = Config.default(tmp_path / "ws").replace(store=backend_store)
    with SignetApp.open(config) as app:  # the bundled local model, no LLM
        old = app.remember(OLD, type="decision").id
        others = [app.remember(text).id for text in OTHERS]
        new = app.remember(NEW).id
        app.run_pipeline_until_idle(only=["embed"])
        app.run_pipeline_until_idle(only=["extract"])
        assert app.get(old).superseded_by == new
        assert app.get(new).superseded_by is None
        assert all(app.get(m).superseded_by is None for m in others)  # unrelated: untouched
        for text in ("which database do we use", "PostgreSQL or MongoDB?", "database decision"):
            hits = app.recall(RecallQuery(text)).hits
            assert hits[0].memory.id == new, (text, [h.memory.content for h in hits])
            replaced = next((h for h in hits if h.memory.id == old), None)
            if replaced is not None:
                assert "superseded" in replaced.adjustments
                assert replaced.memory.superseded_by == new
        app.sessions.synthesize()
        head = (config.workspace / "MEMORY.md").read_text("utf-8")
    assert "MongoDB" in head
    assert "PostgreSQL" not in head


def test_a_statement_without_a_marker_replaces_nothing(
    tmp_path: Path, backend_store: StoreConfig
) -> None:
    # "we use MongoDB" may be true beside "we use PostgreSQL": no "now", no replacement.
    config = Config.default(tmp_path / "ws").replace(store=backend_store)
    with SignetApp.open(config) as app:
        old = app.remember(OLD, type="decision").id
        app.remember("we use MongoDB")
        app.run_pipeline_until_idle(only=["embed"])
        app.run_pipeline_until_idle(only=["extract"])
        assert app.get(old).superseded_by is None
