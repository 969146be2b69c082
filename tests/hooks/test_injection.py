"""The injection service under the hooks (signet/injection): budgets counted with the bundled
tokenizer and marked when cut, the order of session-start, the per-session ledger, the
relevance gate, capture of "remember that ..." requests. Real SQLite files; the hash embedder
where semantics do not matter."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from signet import injection
from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.injection import tokens
from signet.injection.budget import TRUNCATED, ContextBlock
from signet.injection.capture import requests_in
from signet.injection.entity_context import add_entity_context, named_entities
from signet.providers.hash_embedder import HashEmbedder
from signet.workspace import init_workspace
from write_paths import inline


def open_app(tmp_path: Path, store: StoreConfig | None = None, **hooks: object) -> SignetApp:
    init_workspace(tmp_path / "ws")
    cfg = inline(Config.default(tmp_path / "ws"))
    cfg = cfg.replace(hooks=dataclasses.replace(cfg.hooks, **hooks), store=store or StoreConfig())
    return SignetApp.open(cfg, embedder=HashEmbedder(64))


def test_session_start_stays_within_its_token_budget_and_marks_the_cut(tmp_path: Path) -> None:
    with open_app(tmp_path, session_start_tokens=300, memory_tokens=40) as app:
        (app.config.workspace / "USER.md").write_text("The user. " + "likes long walks " * 200)
        for i in range(30):
            app.remember(f"memory number {i} about the deployment pipeline " + "detail " * 60)
        result = injection.handle(app, "session-start", {"session_id": "s"})
    assert tokens.count(result.context) <= 300
    assert result.truncated and TRUNCATED.strip() in result.context
    assert "## USER.md" in result.context and result.memories  # the file is cut, memories fit


def test_pinned_first_then_the_project_then_importance(
    tmp_path: Path, backend_store: StoreConfig
) -> None:
    with open_app(tmp_path, backend_store) as app:
        other = app.remember("an important fact of another project", importance=0.9, project="web").id
        mine = app.remember("a fact of this project", importance=0.4, project="billing").id
        pinned = app.remember("critical: never deploy on Fridays").id
        low = app.remember("a trivial fact", importance=0.1).id
        result = injection.handle(app, "session-start", {"cwd": "/home/u/src/billing"})
    assert list(result.memories) == [pinned, mine, other, low]
    assert result.to_dict()["project"] == "billing"


def test_no_memory_is_injected_twice_in_a_session_until_its_context_is_compacted(
    tmp_path: Path, backend_store: StoreConfig,
) -> None:
    with open_app(tmp_path, backend_store) as app:
        memory = app.remember("we ship on Tuesdays").id
        first = injection.handle(app, "session-start", {"session_id": "s1", "source": "startup"})
        again = injection.handle(app, "session-start", {"session_id": "s1", "source": "resume"})
        other = injection.handle(app, "session-start", {"session_id": "s2"})
        compacted = injection.handle(app, "session-start", {"session_id": "s1", "source": "compact"})
    assert memory in first.memories and memory not in again.memories
    assert again.context == "" and again.to_dict()["resumed"]  # the transcript holds the batch
    assert memory in other.memories and memory in compacted.memories


def test_a_preview_writes_nothing(tmp_path: Path, backend_store: StoreConfig) -> None:
    with open_app(tmp_path, backend_store) as app:
        memory = app.remember("we ship on Tuesdays").id
        injection.handle(app, "session-start", {"session_id": "s"}, record=False)
        injection.handle(app, "user-prompt-submit",
                         {"session_id": "s", "prompt": "Remember that the build uses make."},
                         record=False)
        real = injection.handle(app, "session-start", {"session_id": "s"})
        assert app.list().total == 1
    assert memory in real.memories


def test_each_memory_is_judged_on_its_own_and_a_repeat_gets_no_filler(
    tmp_path: Path, backend_store: StoreConfig,
) -> None:
    """With the hash embedder the exact text's candidates have cosines 1.0 (the memory), 0.58
    (a sibling sharing half its words) and 0.17 (an unrelated memory): the memory goes in, the
    unrelated one never does, whatever slots are free. A question about nothing stored gets
    nothing; the same prompt again in the session gets nothing new."""
    text = "the staging database password rotates every month"
    sibling = "the staging database backups run every night"
    with open_app(tmp_path, backend_store) as app:
        memory = app.remember(text).id
        app.remember(sibling)
        far = app.remember("cats sleep most of the afternoon").id
        exact = injection.handle(app, "user-prompt-submit", {"prompt": text, "session_id": "s"})
        repeat = injection.handle(app, "user-prompt-submit", {"prompt": text, "session_id": "s"})
        other = injection.handle(app, "user-prompt-submit",
                                 {"prompt": "how do I center a div with css grid"})
    assert exact.memories[:1] == (memory,) and far not in exact.memories
    assert repeat.context == "" and repeat.memories == ()
    assert other.context == "" and other.memories == ()


def test_without_vectors_each_hits_confidence_is_its_probability(tmp_path: Path) -> None:
    """Keyword recall carries no cosine: each hit's calibrated confidence is what its own floor
    reads, hooks.min_keyword_confidence (the exact text holds every informative word of the
    prompt: 0.38 with the keyword-only model)."""
    text = "the staging database password rotates every month"
    init_workspace(tmp_path / "ws")
    cfg = Config.default(tmp_path / "ws")
    for gate, injected in ((0.3, True), (0.5, False)):
        config = cfg.replace(hooks=dataclasses.replace(cfg.hooks, min_keyword_confidence=gate))
        with SignetApp.open(config, embedder=None) as app:
            if not app.list().total:
                app.remember(text)
            result = injection.handle(app, "user-prompt-submit", {"prompt": text})
        assert bool(result.memories) is injected, gate


def test_remember_requests_are_stored_and_questions_are_not() -> None:
    prompt = ("Remember that we decided to use Redis for sessions. Also, do you remember when "
              "we met?\nplease remember: I prefer tabs over spaces")
    assert requests_in(prompt) == [
        "We decided to use Redis for sessions.", "I prefer tabs over spaces",
    ]
    assert requests_in("Do you remember the plan?") == []


def test_a_captured_request_becomes_a_typed_memory_of_the_project(tmp_path: Path) -> None:
    with open_app(tmp_path) as app:
        result = injection.handle(app, "user-prompt-submit", {
            "session_id": "s", "cwd": "/src/billing", "harness": "claude-code",
            "prompt": "Remember that we decided to bill monthly.",
        })
        (captured,) = result.to_dict()["captured"]
        memory = app.get(captured)
    assert (memory.content, memory.type, memory.project) == (
        "We decided to bill monthly.", "decision", "billing")
    assert captured not in result.memories  # not echoed back to the prompt that said it


@pytest.mark.parametrize("bad", [[], {"prompt": 3}, {"harness": "vim"}, {"session_id": "x" * 5000}])
def test_a_malformed_request_is_refused_naming_the_problem(tmp_path: Path, bad: object) -> None:
    from signet.errors import InvalidInput

    with open_app(tmp_path) as app, pytest.raises(InvalidInput):
        injection.handle(app, "user-prompt-submit", bad)


def test_an_entity_named_by_its_alias_brings_its_current_attributes(tmp_path: Path) -> None:
    with open_app(tmp_path, min_relevance=1.0) as app:  # the judge shuts recall out: entity only
        app.remember("Maintenance notes for the car", graph={
            "entities": [{"name": "Ford Mustang", "aliases": ["my car"]}],
            "attributes": [
                {"entity": "Ford Mustang", "aspect": "maintenance", "key": "air filter",
                 "value": "replaced March 2026"},
                {"entity": "Ford Mustang", "aspect": "maintenance", "key": "tyres",
                 "value": "winter set in the garage"},
            ],
        })
        named = injection.handle(app, "user-prompt-submit", {"prompt": "Does my car need anything?"})
        other = injection.handle(app, "user-prompt-submit", {"prompt": "Does the bike need anything?"})
    assert "## Ford Mustang" in named.context
    assert "- maintenance: air filter = replaced March 2026" in named.context
    assert named.to_dict()["entities"] and other.context == ""


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_entity_context_reads_the_graph_on_either_backend(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    cfg = inline(Config.default(tmp_path / "ws"))
    if backend == "postgres":
        cfg = cfg.replace(store=StoreConfig(backend="postgres", url=request.getfixturevalue("pg_url")))
    with SignetApp.open(cfg, embedder=HashEmbedder(64)) as app:
        app.remember("Maintenance notes for the car", graph={
            "entities": [{"name": "Ford Mustang", "aliases": ["my car"]}],
            "attributes": [{"entity": "Ford Mustang", "aspect": "maintenance",
                            "key": "air filter", "value": "replaced March 2026"}],
        })
        ids = named_entities(app, "Does my car need anything?")
        block = ContextBlock(budget=200)
        assert add_entity_context(app, block, ids) == ids and len(ids) == 1
        assert named_entities(app, "Does the bike need anything?") == []
    assert block.lines[0].startswith("## Ford Mustang")
    assert "- maintenance: air filter = replaced March 2026" in "\n".join(block.lines)
