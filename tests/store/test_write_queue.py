"""The writer's queue (store/write_queue.py) through a real Store's `write_tx`: FIFO within a
lane, a foreground write before every queued background one until the background one has waited
its bound, and a failed transaction (or an interrupted waiter) never wedges the queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signet.store.db import Store
from signet.store.write_queue import WriteQueue, background_writes


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "q.db")
    with opened.write_tx() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS seen (who TEXT)")
    yield opened
    opened.close()


# Every thread a test starts is a daemon thread and is joined with a bound: a test that fails
# while a writer still waits for its turn must fail, not keep the test process alive.
JOIN_S = 30.0


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "a writer never reached the queue"
        time.sleep(0.001)


def start(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def finish(*threads: threading.Thread) -> None:
    """Join each thread, failing (not hanging) when one is still blocked after JOIN_S."""
    for thread in threads:
        thread.join(JOIN_S)
        assert not thread.is_alive(), f"{thread.name} still waits after {JOIN_S:.0f} s"


class Holder:
    """A thread that holds the write turn (inside a write_tx) until released."""

    def __init__(self, store: Store) -> None:
        self.inside, self.leave = threading.Event(), threading.Event()
        self.thread = start(lambda: self._run(store))
        assert self.inside.wait(JOIN_S), "the holder never got the write turn"

    def _run(self, store: Store) -> None:
        with store.write_tx():
            self.inside.set()
            self.leave.wait(JOIN_S)

    def release(self) -> None:
        self.leave.set()
        finish(self.thread)


def writer(store: Store, name: str, background: bool = False) -> threading.Thread:
    def run() -> None:
        if background:
            with background_writes(), store.write_tx() as conn:
                conn.execute("INSERT INTO seen VALUES (?)", (name,))
        else:
            with store.write_tx() as conn:
                conn.execute("INSERT INTO seen VALUES (?)", (name,))

    return start(run)


def queue_in_order(store: Store, names: list[tuple[str, bool]]) -> list[threading.Thread]:
    """Start each writer only once the previous one waits, so arrival order is known."""
    threads, already = [], sum(store._queue.waiting())
    for count, (name, background) in enumerate(names, start=already + 1):
        threads.append(writer(store, name, background))
        wait_until(lambda n=count: sum(store._queue.waiting()) == n)
    return threads


def seen(store: Store) -> list[str]:
    return [row[0] for row in store.reader().execute("SELECT who FROM seen ORDER BY rowid")]


@pytest.mark.parametrize("background", [False, True])
def test_writers_in_one_lane_go_in_arrival_order(store: Store, background: bool) -> None:
    holder = Holder(store)
    names = [f"w{i}" for i in range(8)]
    threads = queue_in_order(store, [(name, background) for name in names])
    holder.release()
    finish(*threads)
    assert seen(store) == names


def test_a_foreground_write_goes_before_every_queued_background_write(store: Store) -> None:
    store._queue.background_max_wait_s = None  # strict priority: no background write aged out
    holder = Holder(store)
    threads = queue_in_order(store, [("bg1", True), ("bg2", True), ("req1", False),
                                     ("bg3", True), ("req2", False)])
    assert store._queue.waiting() == (2, 3)
    holder.release()
    finish(*threads)
    assert seen(store) == ["req1", "req2", "bg1", "bg2", "bg3"]


def test_a_background_write_passed_over_for_its_bound_goes_next(store: Store) -> None:
    # Requests writing without pause must not keep the workers (the embed worker's vectors)
    # out for ever: past its bound the oldest background write goes before them.
    store._queue.background_max_wait_s = 0.05
    holder = Holder(store)
    threads = queue_in_order(store, [("bg1", True), ("req1", False)])
    time.sleep(0.1)
    threads += queue_in_order(store, [("req2", False)])
    holder.release()
    finish(*threads)
    assert seen(store) == ["bg1", "req1", "req2"]


def test_a_failed_transaction_rolls_back_and_passes_the_turn_on(store: Store) -> None:
    holder = Holder(store)
    failed: list[BaseException] = []

    def failing() -> None:
        try:
            with store.write_tx() as conn:
                conn.execute("INSERT INTO seen VALUES ('lost')")
                conn.execute("INSERT INTO no_such_table VALUES (1)")
        except Exception as exc:  # the test inspects it
            failed.append(exc)

    first = start(failing)
    wait_until(lambda: store._queue.waiting() == (1, 0))
    after = queue_in_order(store, [("next", False)])
    holder.release()
    finish(first, *after)
    assert "no_such_table" in str(failed[0])
    assert seen(store) == ["next"]
    with store.write_tx() as conn:  # and the queue is free again
        conn.execute("INSERT INTO seen VALUES ('later')")
    assert store._queue.waiting() == (0, 0)


def test_the_queue_counts_each_lanes_turns_waits_and_holds(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "stats.db")  # fresh counters: the fixture's writes excluded
    try:
        with store.write_tx() as conn:
            conn.execute("CREATE TABLE seen (who TEXT)")
        before = store.write_stats()
        holder = Holder(store)
        threads = queue_in_order(store, [("req", False), ("bg1", True), ("bg2", True)])
        holder.release()
        finish(*threads)
        after = store.write_stats()
    finally:
        store.close()
    fore, back = after["foreground"], after["background"]
    assert fore["turns"] - before["foreground"]["turns"] == 2  # the holder and the request
    assert back["turns"] == 2 and before["background"]["turns"] == 0
    waited = fore["wait_s"] - before["foreground"]["wait_s"]
    held = fore["hold_s"] - before["foreground"]["hold_s"]
    # The request waited for the holder alone, so no longer than the foreground lane held.
    assert 0 < waited <= held
    assert back["wait_s"] > 0 and back["hold_s"] > 0


def test_nested_write_tx_does_not_queue_behind_itself(store: Store) -> None:
    with store.write_tx() as conn, store.write_tx() as inner:
        assert inner is conn
        conn.execute("INSERT INTO seen VALUES ('nested')")
    assert seen(store) == ["nested"]


def test_an_interrupted_waiter_leaves_the_queue_and_never_holds_the_turn() -> None:
    # Ctrl-C reaches the main thread while it waits for its turn (a real SIGINT).
    queue = WriteQueue()
    holding, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with queue.turn():
            holding.set()
            leave.wait(JOIN_S)

    holder = start(hold)
    assert holding.wait(JOIN_S)
    main = threading.main_thread().ident
    assert main == threading.get_ident()

    def interrupt() -> None:
        wait_until(lambda: queue.waiting() == (1, 0))
        signal.pthread_kill(main, signal.SIGINT)

    start(interrupt)
    with pytest.raises(KeyboardInterrupt):
        queue.acquire()
    assert queue.waiting() == (0, 0)
    leave.set()
    finish(holder)
    with queue.turn():  # free, not promised to the waiter that gave up
        assert queue.waiting() == (0, 0)


def test_only_the_holder_may_release() -> None:
    queue = WriteQueue()
    with pytest.raises(RuntimeError, match="does not hold"):
        queue.release()


def test_signet_bench_writer_times_each_design(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "writer", "--calls", "5", "--workers", "1",
         "--mode", "queue", "--mode", "lock", "--json"],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["modes"]) == {"queue", "lock"} and result["workers"] == 1
    for figures in result["modes"].values():
        assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["max_ms"]
        assert figures["background_writes_per_s"] > 0
