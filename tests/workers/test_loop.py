"""The worker loop with small real workers: back-off bounds, surviving a failing worker,
running until idle, pausing, stopping promptly, and the stale-lease reaper on a real store."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from signet.clock import ManualClock
from signet.store import jobs
from signet.store.backend import SqliteCore
from signet.store.db import Store
from signet.types import format_ts
from signet.workers.loop import Backoff, ReaperWorker, WorkerLoop

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


class Countdown:
    """Does one unit of work per tick until its budget is spent."""

    def __init__(self, name: str, budget: int) -> None:
        self.name, self.budget, self.seen = name, budget, []

    def tick(self, now: datetime) -> bool:
        self.seen.append(now)
        if self.budget <= 0:
            return False
        self.budget -= 1
        return True


class Broken:
    name = "broken"

    def __init__(self) -> None:
        self.calls = 0

    def tick(self, now: datetime) -> bool:
        self.calls += 1
        raise RuntimeError(f"provider down #{self.calls}")


# --- back-off -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_backoff_stays_within_its_bounds(seed: int) -> None:
    backoff = Backoff(rng=random.Random(seed))
    assert 1.0 <= backoff.delay(0) <= 1.5
    assert 2.0 <= backoff.delay(1) <= 2.5
    assert 16.0 <= backoff.delay(4) <= 16.5
    assert 30.0 <= backoff.delay(10) <= 30.5
    assert 30.0 <= backoff.delay(10_000) <= 30.5


def test_backoff_jitter_varies() -> None:
    backoff = Backoff(rng=random.Random(7))
    assert len({backoff.delay(0) for _ in range(10)}) > 1


# --- one round at a time --------------------------------------------------------------------


def test_a_failing_worker_is_logged_and_the_others_keep_ticking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good, broken = Countdown("good", 3), Broken()
    loop = WorkerLoop([broken, good])
    with caplog.at_level(logging.ERROR, logger="signet.workers.loop"):
        results = [loop.run_once(T0 + timedelta(seconds=i)) for i in range(4)]
    assert results == [True, True, True, False]
    assert broken.calls == 4 and len(good.seen) == 4
    state = loop.state()
    assert state["broken"] == {
        "ticks": 4, "work_done": 0, "failures": 4, "consecutive_failures": 4,
        "last_error": "RuntimeError: provider down #4",
        "last_error_at": format_ts(T0 + timedelta(seconds=3)), "paused": False,
    }
    assert state["good"]["work_done"] == 3 and state["good"]["failures"] == 0
    assert "provider down #1" in caplog.text and "Traceback" in caplog.text


def test_a_success_resets_consecutive_failures() -> None:
    class Flaky:
        name = "flaky"
        outcomes = [RuntimeError("a"), RuntimeError("b"), True]

        def tick(self, now: datetime) -> bool:
            outcome = self.outcomes.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

    loop = WorkerLoop([Flaky()])
    for _ in range(2):
        loop.run_once(T0)
    assert loop.state()["flaky"]["consecutive_failures"] == 2
    assert loop.run_once(T0) is True
    state = loop.state()["flaky"]
    assert (state["consecutive_failures"], state["failures"], state["last_error"]) == (
        0, 2, "RuntimeError: b")


def test_run_until_idle_ticks_until_no_worker_has_work() -> None:
    a, b = Countdown("a", 5), Countdown("b", 2)
    loop = WorkerLoop([a, b, Broken()], clock=ManualClock(T0))
    assert loop.run_until_idle() == 7
    assert (a.budget, b.budget) == (0, 0)
    assert len(a.seen) == 6  # five rounds with work, one that found none


def test_run_until_idle_stops_at_max_ticks() -> None:
    endless = Countdown("endless", 10**9)
    loop = WorkerLoop([endless], clock=ManualClock(T0))
    assert loop.run_until_idle(max_ticks=50) == 50


def test_a_paused_loop_ticks_nothing_until_resumed() -> None:
    a, b = Countdown("a", 5), Countdown("b", 5)
    loop = WorkerLoop([a, b], clock=ManualClock(T0))
    loop.pause()
    assert loop.run_once(T0) is False and a.seen == b.seen == []
    assert all(s["paused"] for s in loop.state().values())
    loop.resume()
    loop.pause("b")
    assert loop.run_once(T0) is True
    assert (len(a.seen), len(b.seen)) == (1, 0)
    loop.resume("b")
    assert loop.run_once(T0) is True and len(b.seen) == 1
    with pytest.raises(KeyError):
        loop.pause("nobody")


def test_worker_names_must_be_unique() -> None:
    with pytest.raises(ValueError):
        WorkerLoop([Countdown("x", 1), Countdown("x", 1)])


# --- run() in a thread -----------------------------------------------------------------------


def test_run_stops_promptly_when_the_event_is_set() -> None:
    idle = Countdown("idle", 0)
    loop = WorkerLoop([idle], idle_sleep_s=60.0)
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,))
    thread.start()
    deadline = time.monotonic() + 30
    while not idle.seen and time.monotonic() < deadline:
        time.sleep(0.005)
    assert idle.seen, "run() never ticked"
    stop.set()
    # Well inside the 60 s idle sleep it is in, with room for a loaded machine (no timing
    # bound tighter than that: the point is that setting the event cuts the sleep short).
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_run_sleeps_when_idle_and_backs_off_a_failing_worker() -> None:
    clock = ManualClock(T0)
    broken, idle = Broken(), Countdown("idle", 2)
    sleeps: list[float] = []
    stop = threading.Event()

    def fake_sleep(event: threading.Event, seconds: float) -> None:
        sleeps.append(seconds)
        clock.advance(seconds=seconds)
        if len(sleeps) >= 8:
            event.set()

    loop = WorkerLoop([broken, idle], idle_sleep_s=2.0, clock=clock, sleep=fake_sleep,
                      backoff=Backoff(jitter_s=0.0))
    loop.run(stop)
    # t=0: two rounds with work (no sleep), then an idle round. The broken worker fails at
    # t=0, 1, 3 and 7 (back-off 1, 2, 4, 8 s); the loop wakes early for its first retry and
    # otherwise sleeps the idle interval, never ticking it while it is backed off.
    assert sleeps == [1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    assert broken.calls == 4
    assert loop.state()["broken"]["consecutive_failures"] == 4
    assert idle.budget == 0


# --- the reaper -------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "memories.db")
    yield opened
    opened.close()


def test_the_reaper_returns_stale_leases_once_per_interval(store: Store) -> None:
    with store.write_tx() as conn:
        job_id = jobs.enqueue(conn, "extract", memory_id="m1", now=format_ts(T0))
        assert jobs.lease(conn, format_ts(T0)) is not None
    loop = WorkerLoop([ReaperWorker(SqliteCore(store), lease_timeout_ms=300_000, interval_s=60)])

    assert loop.run_once(T0) is False  # the lease is fresh
    assert jobs.get(store.reader(), job_id).status == "leased"  # type: ignore[union-attr]
    assert loop.run_once(T0 + timedelta(minutes=6)) is True
    job = jobs.get(store.reader(), job_id)
    assert job is not None and (job.status, job.error) == ("pending", "lease expired")
    assert loop.run_once(T0 + timedelta(minutes=20)) is False  # nothing left to reap


def test_the_reaper_waits_for_its_interval(store: Store) -> None:
    reaper = ReaperWorker(SqliteCore(store), lease_timeout_ms=1000, interval_s=60)
    assert reaper.tick(T0) is False
    with store.write_tx() as conn:
        job_id = jobs.enqueue(conn, "embed", memory_id="m1", now=format_ts(T0))
        jobs.lease(conn, format_ts(T0))
    assert reaper.tick(T0 + timedelta(seconds=59)) is False
    assert jobs.get(store.reader(), job_id).status == "leased"  # type: ignore[union-attr]
    assert reaper.tick(T0 + timedelta(seconds=60)) is True
    assert jobs.get(store.reader(), job_id).status == "pending"  # type: ignore[union-attr]


# --- idle workers and the one writer ----------------------------------------------------------


def test_idle_workers_take_no_write_turn(tmp_path: Path) -> None:
    """Every worker of a real app, ticked with nothing to do, leaves the one writer alone: an
    idle lease is a read, so a busy daemon's requests do not queue behind empty leases. The
    jobs that are there are still claimed."""
    from signet.app import SignetApp
    from signet.config import Config

    config = Config.default(tmp_path)
    with SignetApp.open(config) as app:
        app.remember("The deploy script lives in tools/deploy.sh")
        workers = app.workers()
        assert app.job_depths()["embed"].get("pending") == 1
        for worker in workers:  # the first round: the embed job is claimed and done
            worker.tick(app.clock.now())
        assert app.job_depths()["embed"].get("pending", 0) == 0
        before = app.store.write_stats()
        for _ in range(3):
            for worker in workers:
                worker.tick(app.clock.now())
        after = app.store.write_stats()
    turns = {lane: after[lane]["turns"] - before[lane]["turns"] for lane in after}
    assert turns == {"foreground": 0, "background": 0}
