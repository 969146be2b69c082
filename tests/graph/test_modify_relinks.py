"""A content change keeps the graph current: the memory loses the links of its old text, the
inline linker links the entities its new text names, and extraction (and hints) run again.
Real database (SQLite, then PostgreSQL), the default pipeline (rule extraction, no LLM), the
hash embedder."""

from __future__ import annotations

import pytest

from signet.app import SignetApp


@pytest.fixture
def app(app: SignetApp, backend: str) -> SignetApp:
    """The root conftest's app, on each backend in turn (SQLite, then PostgreSQL)."""
    return app


def names(app: SignetApp, memory_id: str) -> set[str]:
    with app.graph.store.reading() as graph:
        return {e.name for e in graph.entities_of_memory(memory_id)}


def mentions(app: SignetApp, name: str) -> int:
    with app.graph.store.reading() as graph:
        return graph.mention_count(graph.resolve([name.lower()], "default")[name.lower()])


def test_modify_relinks_the_mentions_and_queues_extraction_again(app: SignetApp) -> None:
    billing = app.remember("The billing service is written in Go").id
    app.remember("The search service is written in Rust")
    app.run_pipeline_until_idle()
    assert "Go" in names(app, billing) and "Rust" not in names(app, billing)
    go_before = mentions(app, "Go")

    app.modify(billing, {"content": "The billing service is written in Rust"})
    # At once, in the modify's own transaction: Go unlinked, Rust (known) linked inline.
    assert "Go" not in names(app, billing) and "Rust" in names(app, billing)
    assert mentions(app, "Go") == go_before - 1
    assert app.get(billing).extraction_status == "pending"
    assert [j.memory_id for j in app.jobs(job_type="extract", status="pending")] == [billing]

    app.run_pipeline_until_idle()
    assert app.get(billing).extraction_status == "completed"
    assert "Go" not in names(app, billing) and "Rust" in names(app, billing)


def test_a_change_that_keeps_the_content_leaves_the_graph_alone(app: SignetApp) -> None:
    billing = app.remember("The billing service is written in Go").id
    app.run_pipeline_until_idle()
    app.modify(billing, {"importance": 0.9, "tags": ["infra"]})
    assert "Go" in names(app, billing)
    assert app.jobs(job_type="extract", status="pending") == []
