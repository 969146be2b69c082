"""Time in ranking, with the clock as an input (signet/clock.py): importance decays with the days
since a memory was last accessed (search.decay_rate, seed 002's importance x decay), pinned
memories never decay, an access restarts the decay and adds the bounded rehearsal boost
(search.rehearsal_boost). Time moves by `ManualClock.advance`, never by sleeping or by editing
timestamps in the database."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.clock import ManualClock, stamp
from signet.config import Config
from signet.types import RecallHit, RecallQuery

QUERY = RecallQuery("backup job runs nightly", mode="keyword")
OLD = "The backup job runs nightly at two"
NEW = "The backup job runs nightly at six"  # same length, same words the query matches


def _open(tmp_path: Path, clock: ManualClock, **search: float) -> SignetApp:
    config = Config.default(tmp_path / "ws")
    config = config.replace(search=dataclasses.replace(config.search, **search))
    return SignetApp.open(config, embedder=None, llm=None, clock=clock)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def app(tmp_path: Path, clock: ManualClock) -> Iterator[SignetApp]:
    with _open(tmp_path, clock) as opened:
        yield opened


def _hits(app: SignetApp) -> dict[str, RecallHit]:
    return {h.memory.id: h for h in app.recall(QUERY).hits}


def _band(importance: float, days: float, rate: float = 0.05) -> float:
    """The factor recall/hybrid.py applies: importance decayed, mapped into [0.85, 1.15]."""
    return 0.85 + 0.3 * importance * (1 - rate) ** days


def test_writes_are_stamped_by_the_clock_given_at_open(app: SignetApp, clock: ManualClock) -> None:
    first = app.remember("The backup job runs nightly").memory
    clock.advance(days=3)
    second = app.remember("The restore drill runs monthly").memory
    assert first.created_at == "2026-01-01T00:00:00.000Z"
    assert second.created_at == stamp(clock) == "2026-01-04T00:00:00.000Z"
    assert app.forget(second.id).deleted_at == stamp(clock)


def test_an_unused_memory_sinks_by_its_decayed_importance(app: SignetApp, clock: ManualClock) -> None:
    memory_id = app.remember(OLD, importance=0.9).id
    fresh = _hits(app)[memory_id]
    clock.advance(days=60)
    aged = _hits(app)[memory_id]
    assert "importance" in aged.adjustments
    # Exactly the decay, nothing else moved: the same memory, the same query, 60 days on.
    assert aged.score / fresh.score == pytest.approx(_band(0.9, 60) / _band(0.9, 0), rel=1e-6)
    clock.advance(days=20)
    assert _hits(app)[memory_id].score < aged.score


def test_a_new_memory_outranks_an_equal_one_left_unused(app: SignetApp, clock: ManualClock) -> None:
    old = app.remember(OLD, importance=0.9).id
    clock.advance(days=60)
    new = app.remember(NEW, importance=0.9).id
    assert [h.memory.id for h in app.recall(QUERY).hits][:2] == [new, old]


def test_pinned_memories_do_not_decay(app: SignetApp, clock: ManualClock) -> None:
    memory_id = app.remember(OLD, pinned=True, importance=0.9).id
    fresh = _hits(app)[memory_id]
    clock.advance(days=60)
    aged = _hits(app)[memory_id]
    assert aged.score == pytest.approx(fresh.score)
    assert "importance" not in aged.adjustments


def test_an_access_restarts_the_decay_and_adds_the_rehearsal_boost(
    app: SignetApp, clock: ManualClock
) -> None:
    memory_id = app.remember(OLD, importance=0.9).id
    fresh = _hits(app)[memory_id]
    clock.advance(days=60)
    app.feedback(memory_id, "positive")  # the agent used it: an access, now
    used = _hits(app)[memory_id]
    assert app.get(memory_id).last_accessed == stamp(clock)
    assert "rehearsal" in used.adjustments
    # Decay counted from the access (none yet), times the boost of one access.
    assert used.score > fresh.score


def test_decay_rate_zero_turns_decay_off(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock, decay_rate=0.0) as app:
        memory_id = app.remember(OLD, importance=0.9).id
        fresh = _hits(app)[memory_id]
        clock.advance(days=60)
        assert _hits(app)[memory_id].score == pytest.approx(fresh.score)


def test_rehearsal_boost_zero_turns_rehearsal_off(tmp_path: Path, clock: ManualClock) -> None:
    with _open(tmp_path, clock, rehearsal_boost=0.0) as app:
        memory_id = app.remember(OLD, importance=0.9).id
        before = _hits(app)[memory_id]
        app.feedback(memory_id, "positive")
        after = _hits(app)[memory_id]
        assert "rehearsal" not in after.adjustments
        assert after.score == pytest.approx(before.score)
