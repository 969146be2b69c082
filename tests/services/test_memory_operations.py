"""remember / get / list / modify / forget / recover / history through the app, on real SQLite
(and, in the tests taking `backend`, on a real PostgreSQL database too: the one memory service
on both stores)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.clock import ManualClock
from signet.config import Config
from signet.errors import Conflict, Frozen, InvalidInput, NotFound
from signet.providers.hash_embedder import HashEmbedder
from signet.store import fts
from signet.types import Actor, MemoryFilters, RecallQuery


def test_remember_returns_a_stored_memory_with_history(app: SignetApp, backend: str) -> None:
    result = app.remember("The deploy script lives in ops/deploy.sh", tags=["ops"], who="alice")
    memory = app.get(result.id)
    assert memory.content == "The deploy script lives in ops/deploy.sh"
    assert memory.tags == ("ops",)
    assert memory.who == "alice"
    assert result.embedded
    events = app.history(result.id)
    assert [e.event for e in events] == ["created"]
    assert events[0].actor_type == "operator"


def test_critical_prefix_pins_with_full_importance(app: SignetApp, backend: str) -> None:
    memory = app.remember("critical: never force-push to main").memory
    assert memory.pinned and memory.importance == 1.0
    assert memory.content == "never force-push to main"


def test_tag_prefix_sets_tags_and_combines_with_critical(app: SignetApp, backend: str) -> None:
    memory = app.remember("critical: [git, safety]: rebase before merging").memory
    assert memory.tags == ("git", "safety")
    assert memory.pinned
    assert memory.content == "rebase before merging"


@pytest.mark.parametrize(
    ("content", "fields", "message"),
    [
        ("", {}, "empty"),
        ("   \n\t ", {}, "empty"),
        ("ok", {"type": "gossip"}, "invalid type"),
        ("ok", {"importance": 3}, "importance"),
        ("ok", {"tags": [1, 2]}, "tags"),
        ("ok", {"event_at": "yesterday-ish"}, "event_at"),
        ("ok", {"colour": "red"}, "unknown field"),
        ("a\x00b", {}, "content holds a NUL"),
        ("ok", {"who": "x\x00"}, "who holds a NUL"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    app: SignetApp, content: str, fields: dict, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        app.remember(content, **fields)
    assert app.list().total == 0


def test_oversized_content_is_refused(config: Config) -> None:
    small = dataclasses.replace(config, memory=dataclasses.replace(config.memory, max_content_chars=50))
    with SignetApp.open(small, embedder=None) as app:
        with pytest.raises(InvalidInput, match="maximum is 50"):
            app.remember("x" * 51)
        assert app.list().total == 0


def test_duplicate_content_is_a_dedup_hit_with_history(app: SignetApp, backend: str) -> None:
    first = app.remember("Uses PostgreSQL for the main database.")
    second = app.remember("  uses postgresql for the main   database ")
    assert second.deduped and second.id == first.id
    assert app.list().total == 1
    dedup = [e for e in app.history(first.id) if e.event == "none"]
    assert dedup and dedup[0].metadata == {"dedupedExistingId": first.id}


def test_two_processes_racing_to_insert_the_same_content_keep_one_row(config: Config) -> None:
    SignetApp.open(config, embedder=None).close()
    script = (
        "import sys\n"
        "from signet.app import SignetApp\n"
        "from signet.config import Config\n"
        "app = SignetApp.open(Config.default(sys.argv[1]), embedder=None)\n"
        "ids = {app.remember(f'shared fact number {i}').id for i in range(60)}\n"
        "print(len(ids))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(config.workspace)], stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    with SignetApp.open(config, embedder=None) as app:
        assert app.list(limit=1000).total == 60


def test_modify_checks_version_and_records_history(app: SignetApp, backend: str) -> None:
    memory = app.remember("Team standup is at 9:30").memory
    updated = app.modify(memory.id, {"content": "Team standup is at 10:00"}, expected_version=1)
    assert updated.version == 2 and updated.update_count == 1
    with pytest.raises(Conflict, match="version 2"):
        app.modify(memory.id, {"importance": 0.9}, expected_version=1)
    events = app.history(memory.id)
    assert [e.event for e in events] == ["created", "updated"]
    assert events[1].old_content == "Team standup is at 9:30"
    assert events[1].new_content == "Team standup is at 10:00"


def test_modify_refuses_unknown_fields_and_content_of_another_memory(app: SignetApp, backend: str) -> None:
    a = app.remember("alpha fact").id
    app.remember("beta fact")
    with pytest.raises(InvalidInput):
        app.modify(a, {"created_at": "2020-01-01"})
    with pytest.raises(Conflict, match="already holds"):
        app.modify(a, {"content": "Beta fact."})
    assert app.get(a).content == "alpha fact"


def test_forget_needs_force_for_pinned_and_recover_restores(app: SignetApp, backend: str) -> None:
    pinned = app.remember("critical: the API key rotates monthly").id
    with pytest.raises(Conflict, match="pinned"):
        app.forget(pinned)
    assert not app.get(pinned).is_deleted
    app.forget(pinned, force=True, reason="obsolete")
    assert app.get(pinned).is_deleted
    assert not app.recall(RecallQuery("API key rotates", mode="keyword")).hits
    app.recover(pinned)
    assert app.recall(RecallQuery("API key rotates", mode="keyword")).hits
    assert [e.event for e in app.history(pinned)] == ["created", "deleted", "recovered"]
    with pytest.raises(Conflict, match="not deleted"):
        app.recover(pinned)


def test_recover_outside_the_tombstone_window_is_refused(config: Config) -> None:
    clock = ManualClock()  # tombstones are kept 30 days (retention.tombstone_retention_ms)
    with SignetApp.open(config, embedder=None, clock=clock) as app:
        kept, lost = app.remember("kept a while").id, app.remember("short lived").id
        app.forget(kept)
        app.forget(lost)
        clock.advance(days=29, hours=23)
        assert not app.recover(kept).is_deleted
        clock.advance(hours=2)
        with pytest.raises(Conflict, match="recovery window"):
            app.recover(lost)


def test_unknown_ids_are_not_found(app: SignetApp, backend: str) -> None:
    for call in (app.get, app.history, app.forget, app.recover):
        with pytest.raises(NotFound):
            call("nope")
    with pytest.raises(NotFound):
        app.modify("nope", {"importance": 0.1})


def test_actor_is_recorded(app: SignetApp, backend: str) -> None:
    actor = Actor(name="claude-code", type="agent", session_id="s1", request_id="r1")
    memory_id = app.remember("agent-written fact", actor=actor).id
    event = app.history(memory_id)[0]
    assert (event.changed_by, event.actor_type, event.session_id, event.request_id) == (
        "claude-code", "agent", "s1", "r1",
    )


def test_list_paginates_and_filters(app: SignetApp, backend: str) -> None:
    for i in range(7):
        app.remember(f"note number {i}", project="p1" if i % 2 else "p2", tags=["t"] if i < 3 else [])
    page = app.list(MemoryFilters(project="p1"), limit=2, offset=0)
    assert page.total == 3 and len(page.items) == 2
    assert app.list(MemoryFilters(tags=("t",))).total == 3
    with pytest.raises(InvalidInput):
        app.list(limit=0)


def test_frozen_mutations_are_refused(config: Config) -> None:
    with SignetApp.open(config, embedder=None) as app:
        memory_id = app.remember("before the freeze").id
    frozen = dataclasses.replace(
        config, pipeline=dataclasses.replace(config.pipeline, mutations_frozen=True)
    )
    with SignetApp.open(frozen, embedder=None) as app:
        with pytest.raises(Frozen):
            app.remember("during the freeze")
        with pytest.raises(Frozen):
            app.forget(memory_id)
        assert app.recall(RecallQuery("freeze", mode="keyword")).hits


def test_fts_stays_consistent_after_update_soft_delete_and_hard_delete(app: SignetApp) -> None:
    memory_id = app.remember("the cobalt server runs nightly backups").id
    app.modify(memory_id, {"content": "the indigo server runs nightly backups"})
    conn = app.store.reader()
    assert fts.indexed_ids(conn, "cobalt") == []
    assert fts.indexed_ids(conn, "indigo") == [memory_id]
    app.forget(memory_id)
    assert not app.recall(RecallQuery("indigo", mode="keyword")).hits
    with app.store.write_tx() as wconn:
        wconn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    assert fts.indexed_ids(app.store.reader(), "indigo") == []
    assert fts.integrity_check(app.store.reader())


def test_embedding_never_runs_inside_a_write_transaction(config: Config) -> None:
    calls: list[bool] = []

    class WatchingEmbedder(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.append(app.store.in_write_tx)
            return super().embed(texts)

    app = SignetApp.open(config, embedder=WatchingEmbedder(64))
    try:
        memory_id = app.remember("vectors are computed before the lock").id
        app.modify(memory_id, {"content": "vectors are still computed before the lock"})
        app.recall(RecallQuery("vectors lock"))
    finally:
        app.close()
    assert calls and not any(calls)


def test_vectors_of_another_model_are_marked_stale(config: Config) -> None:
    with SignetApp.open(config, embedder=HashEmbedder(64)) as app:
        app.remember("embedded with the 64-wide model")
    with SignetApp.open(config, embedder=HashEmbedder(32)) as app:
        audit = app.status()["embeddings"]
        assert audit["stale"] == 1 and audit["missing"] == 1
        assert app.notes and "stale" in app.notes[0]


def test_a_store_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    config = Config.default(tmp_path)
    config.db_path.parent.mkdir(parents=True)
    config.db_path.write_bytes(b"this is not a database" * 100)
    from signet.errors import StoreError

    with pytest.raises(StoreError, match="memories.db"):
        SignetApp.open(config, embedder=None)
