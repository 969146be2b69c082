"""mem0 exports and markdown folders imported through the remember write path, on both store
backends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config, PipelineConfig, StoreConfig
from signet.errors import InvalidInput
from signet.portable.importers import import_markdown, import_mem0, markdown_pieces
from signet.providers.hash_embedder import HashEmbedder
from signet.types import Actor, MemoryFilters

MEM0 = {"results": [
    {"id": "m-1", "memory": "Prefers window seats on flights", "user_id": "alex",
     "categories": ["travel"], "created_at": "2024-07-20T01:30:00.000000-07:00"},
    {"id": "m-2", "memory": "Allergic to peanuts", "user_id": "alex", "metadata": {}},
    {"id": "m-3", "memory": "allergic to peanuts.", "user_id": "alex"},
    {"id": "m-4", "memory": ""},
    "not an object",
]}


@pytest.fixture
def app(tmp_path: Path, backend_store: StoreConfig) -> Iterator[SignetApp]:
    """The same importers on either store backend (the write path: prepare, then write)."""
    cfg = Config.default(tmp_path / "ws").replace(pipeline=PipelineConfig(enabled=False),
                                                  store=backend_store)
    opened = SignetApp.open(cfg, embedder=HashEmbedder(64), llm=None)
    yield opened
    opened.close()


def test_mem0_export_becomes_memories_with_their_fields(app: SignetApp, tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(MEM0))
    counts = import_mem0(app, path, actor=Actor(name="import"), project="home")
    assert (counts["read"], counts["imported"], counts["deduped"]) == (5, 2, 1)
    assert len(counts["refused"]) == 2
    items = {m.source_id: m for m in app.list(MemoryFilters(project="home")).items}
    seat = items["m-1"]
    assert (seat.content, seat.who, seat.tags, seat.source_type) == (
        "Prefers window seats on flights", "alex", ("travel",), "mem0")
    assert seat.event_at == "2024-07-20T01:30:00.000000-07:00"
    again = import_mem0(app, path, actor=Actor(name="import"), project="home")
    assert again["imported"] == 0 and again["deduped"] == 3
    path.write_text("{broken")
    with pytest.raises(InvalidInput, match="mem0"):
        import_mem0(app, path, actor=Actor())


def test_markdown_folders_become_one_memory_per_paragraph_or_item(app: SignetApp, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / ".obsidian").mkdir(parents=True)
    (notes / "people.md").write_text(
        "---\ntags: [x]\n---\n# People\n\nDana runs the bakery\non Elm street.\n\n"
        "- Sam plays cello\n- [x] Call Sam\n\n```\ncode is skipped\n```\n")
    (notes / ".obsidian" / "x.md").write_text("hidden")
    counts = import_markdown(app, notes, actor=Actor(name="import"))
    assert counts["imported"] == 3
    contents = sorted(m.content for m in app.list().items)
    assert contents == ["Call Sam", "Dana runs the bakery on Elm street.", "Sam plays cello"]
    assert {m.source_id for m in app.list().items} == {"markdown:people.md"}
    assert markdown_pieces("# only a heading") == []


def test_a_mem0_item_whose_metadata_is_not_an_object_is_still_read(
    app: SignetApp, tmp_path: Path
) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps([{"memory": "Takes the night train", "metadata": "free text"},
                                {"memory": "Drinks oolong", "metadata": ["a", "list"]}]))
    counts = import_mem0(app, path, actor=Actor(name="import"))
    assert (counts["read"], counts["imported"], counts["refused"]) == (2, 2, [])


def test_an_import_of_a_path_nothing_can_be_at_is_not_found(app: SignetApp, tmp_path: Path) -> None:
    """A missing path, or one longer than the file system allows (ENAMETOOLONG made the
    daemon answer 500 to the API fuzzer), is 'nothing to import', and nothing is written."""
    from signet.errors import NotFound
    from signet.portable.imports import import_from

    for path in (tmp_path / "missing", "0" * 5000):
        with pytest.raises(NotFound, match="nothing to import"):
            import_from(app, path, "markdown")
    assert app.list(MemoryFilters()).total == 0


def test_a_mem0_item_that_is_not_storable_text_is_refused_alone(
    app: SignetApp, tmp_path: Path
) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps([
        {"id": "ok-1", "memory": "Takes the early train"},
        {"id": "bad-1", "memory": "a lone \ud800 surrogate"},
        {"id": "bad-2", "memory": "a NUL \u0000 inside"},
        {"id": "bad-3", "memory": "a tag with a surrogate", "categories": ["x\udc80"]},
        {"id": "ok-2", "memory": "Drinks green tea"},
    ]))
    counts = import_mem0(app, path, actor=Actor(name="import"))
    assert (counts["read"], counts["imported"]) == (5, 2)
    assert len(counts["refused"]) == 3
    assert "content is not valid Unicode text" in counts["refused"][0]
    assert "content holds a NUL character" in counts["refused"][1]
    assert "tags is not valid Unicode text" in counts["refused"][2]
    assert {m.source_id for m in app.list(MemoryFilters()).items} == {"ok-1", "ok-2"}
