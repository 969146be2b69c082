"""The hooks' store contract (store/injections.py InjectionStore), one suite on both backends: a
real SQLite file and a real PostgreSQL database (tests/pg_server.py).

The ledger is per caller and session, a repeat is ignored, and forgetting a session drops only
that caller's rows; the session-start candidates are the pinned memories, then the project's
most important, then everyone's, each once, never a document chunk nor another agent's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from signet.normalize import normalize_content
from signet.store.backend import Backend
from signet.types import Actor, NewMemory

ACTOR = Actor(name="tester", type="operator")


@pytest.fixture
def store(open_store: Callable[..., Backend]) -> Backend:
    return open_store()


def remember(store: Backend, content: str, second: int, **fields: object) -> str:
    norm = normalize_content(content)
    written = store.core.write_memory(
        NewMemory(content=content, **fields), storage=norm.storage,  # type: ignore[arg-type]
        normalized=norm.normalized, content_hash=norm.content_hash, actor=ACTOR,
        now=f"2026-11-29T12:00:{second:02d}.000Z",
    ).result
    assert written is not None
    return written.id


def test_the_ledger_is_per_caller_and_session(store: Backend) -> None:
    ledger = store.injections()
    one = remember(store, "The deploy runs on Fridays", 1)
    two = remember(store, "The staging database is small", 2)
    ledger.record("tok_a", "s1", [one, two], "prompt", "2026-11-29T12:01:00.000Z")
    ledger.record("tok_a", "s1", [one], "prompt", "2026-11-29T12:02:00.000Z")
    ledger.record("tok_b", "s1", [one], "prompt", "2026-11-29T12:02:00.000Z")
    assert ledger.injected("tok_a", "s1", [one, two, "missing"]) == {one, two}
    assert ledger.injected("tok_a", "s2", [one, two]) == set()
    assert ledger.injected("tok_a", "s1", []) == set()
    assert ledger.forget_session("tok_a", "s1") == 2
    assert ledger.injected("tok_a", "s1", [one, two]) == set()
    assert ledger.injected("tok_b", "s1", [one, two]) == {one}


def test_startup_candidates_are_pinned_then_project_then_everyone(store: Backend) -> None:
    pinned_old = remember(store, "The user writes Python", 1, pinned=True, importance=0.1)
    pinned_new = remember(store, "The user lives in Lisbon", 2, pinned=True, importance=0.2,
                          project="other")
    project_top = remember(store, "The API uses FastAPI", 3, project="p", importance=0.9)
    project_low = remember(store, "The API has no auth yet", 4, project="p", importance=0.3)
    global_top = remember(store, "The user prefers tabs", 5, project="q", importance=0.8)
    global_low = remember(store, "The user has a cat", 6, importance=0.15)
    remember(store, "A chunk of a manual", 7, type="document_chunk", pinned=True, importance=1.0)
    remember(store, "Another agent's pin", 8, pinned=True, importance=1.0, agent_id="b")
    ledger = store.injections()

    within = ledger.startup_candidates(agent_id="default", project="p", limit=10)
    assert [m.id for m in within] == [
        pinned_new, pinned_old, project_top, project_low, global_top, global_low]
    anywhere = ledger.startup_candidates(agent_id="default", project=None, limit=10)
    assert [m.id for m in anywhere] == [
        pinned_new, pinned_old, project_top, global_top, project_low, global_low]
    first = ledger.startup_candidates(agent_id="default", project="p", limit=1)
    assert [m.id for m in first] == [pinned_new, project_top]
    assert first[0].content == "The user lives in Lisbon" and first[0].pinned
