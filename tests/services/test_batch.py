"""Batch forget (preview, then execute with the preview's confirm token) and batch modify,
on a real database (SQLite, and PostgreSQL in the tests taking `backend`): each memory through
the one write path, per-item results, the cap."""

from __future__ import annotations

import pytest

from signet import batch
from signet.app import SignetApp
from signet.clock import ManualClock
from signet.errors import Conflict, InvalidInput
from signet.types import Actor, MemoryFilters


def _remember(app, *texts: str, **fields) -> list[str]:
    return [app.remember(text, **fields).id for text in texts]


def test_preview_changes_nothing_and_execute_with_its_token_forgets_exactly_that(app, backend: str) -> None:
    ids = _remember(app, "the kettle is blue", "the kettle whistles loudly", "tea is green")
    preview = app.forget_batch(query="kettle")
    assert preview["mode"] == "preview" and preview["count"] == 2
    assert {m["id"] for m in preview["memories"]} == set(ids[:2])
    assert all(not app.get(i).is_deleted for i in ids)

    done = app.forget_batch(query="kettle", mode="execute", confirm_token=preview["confirm_token"],
                            reason="cleanup", actor=Actor(name="ops"))
    assert done["succeeded"] == 2 and done["failed"] == 0
    assert [app.get(i).is_deleted for i in ids] == [True, True, False]
    assert app.history(ids[0])[-1].changed_by == "ops"


def test_execute_without_a_token_or_with_a_stale_one_is_refused(app, backend: str) -> None:
    _remember(app, "alpha note one", "alpha note two")
    preview = app.forget_batch(query="alpha")
    with pytest.raises(InvalidInput):
        app.forget_batch(query="alpha", mode="execute")
    _remember(app, "alpha note three")  # the match changed since the preview
    with pytest.raises(Conflict) as err:
        app.forget_batch(query="alpha", mode="execute", confirm_token=preview["confirm_token"])
    assert err.value.code == "confirm_mismatch"
    assert app.list().total == 3 and all(not m.is_deleted for m in app.list().items)


def test_a_token_is_bound_to_force_and_cannot_be_forged(app, backend: str) -> None:
    ids = _remember(app, "pinned one", pinned=True)
    preview = app.forget_batch(ids=ids)
    with pytest.raises(Conflict):
        app.forget_batch(ids=ids, mode="execute", confirm_token=preview["confirm_token"], force=True)
    stamp = preview["confirm_token"].split(".")[0]
    with pytest.raises(Conflict):
        app.forget_batch(ids=ids, mode="execute", confirm_token=f"{stamp}.{'0' * 40}")


def test_an_expired_token_is_refused(config) -> None:
    clock = ManualClock()
    with SignetApp.open(config, embedder=None, llm=None, clock=clock) as app:
        ids = _remember(app, "short lived", "kept a little")
        late, in_time = app.forget_batch(ids=ids[:1]), app.forget_batch(ids=ids[1:])
        clock.advance(seconds=batch.CONFIRM_TTL_S - 1)
        done = app.forget_batch(ids=ids[1:], mode="execute", confirm_token=in_time["confirm_token"])
        assert done["succeeded"] == 1
        clock.advance(seconds=5)
        with pytest.raises(Conflict) as err:
            app.forget_batch(ids=ids[:1], mode="execute", confirm_token=late["confirm_token"])
        assert err.value.code == "confirm_expired"
        assert not app.get(ids[0]).is_deleted


def test_pinned_and_missing_memories_are_reported_per_item(app, backend: str) -> None:
    ids = _remember(app, "plain memory") + _remember(app, "a pinned memory", pinned=True)
    preview = app.forget_batch(ids=[*ids, "nope"])
    assert preview["missing"] == ["nope"] and preview["pinned"] == [ids[1]]
    done = app.forget_batch(ids=[*ids, "nope"], mode="execute",
                            confirm_token=preview["confirm_token"])
    results = {r["id"]: r for r in done["results"]}
    assert results[ids[0]]["ok"] and not results[ids[1]]["ok"]
    assert results[ids[1]]["error"]["code"] == "conflict"
    assert done["missing"] == ["nope"] and not app.get(ids[1]).is_deleted


def test_the_batch_is_capped_and_never_matches_everything(app, backend: str) -> None:
    with pytest.raises(InvalidInput):
        app.forget_batch(ids=[f"id{n}" for n in range(batch.MAX_BATCH + 1)])
    with pytest.raises(InvalidInput):
        app.forget_batch()
    with pytest.raises(InvalidInput):
        app.forget_batch(ids=["a"], query="b")
    _remember(app, *(f"capped item number {n}" for n in range(205)), project="p")
    preview = app.forget_batch(filters=MemoryFilters(project="p"))
    assert preview["count"] == batch.MAX_BATCH and preview["capped"] is True


def test_batch_modify_applies_each_item_and_reports_failures(app, backend: str) -> None:
    ids = _remember(app, "first content", "second content")
    out = app.modify_batch([
        {"id": ids[0], "changes": {"importance": 0.9}},
        {"id": ids[1], "changes": {"tags": ["x"]}, "version": 99},
        {"id": "missing", "changes": {"importance": 0.1}},
    ], reason="batch")
    assert [r["ok"] for r in out["results"]] == [True, False, False]
    assert out["results"][1]["error"]["code"] == "conflict"
    assert out["results"][2]["error"]["code"] == "not_found"
    assert app.get(ids[0]).importance == 0.9 and app.get(ids[1]).tags == ()
    with pytest.raises(InvalidInput):
        app.modify_batch([{"id": "x", "changes": {}}] * (batch.MAX_BATCH + 1))
