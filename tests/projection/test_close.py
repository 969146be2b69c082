"""Closing the app waits for a projection computed in the background, so nothing writes to
the store after it closed (the thread is a daemon thread: nothing else would wait for it)."""

from __future__ import annotations

import logging
import threading
from datetime import datetime

import pytest

from signet.app import SignetApp
from signet.clock import ManualClock
from signet.config import Config
from signet.projection.service import Pending
from signet.providers.hash_embedder import HashEmbedder
from signet.store.db import Store


class HeldClock(ManualClock):
    """Holds the projection thread when it asks the time, after its layout and before its
    write, until `release` is set: the test decides when the computation may end."""

    def __init__(self) -> None:
        super().__init__()
        self.reached = threading.Event()
        self.release = threading.Event()

    def now(self) -> datetime:
        if threading.current_thread().name.startswith("signet-projection"):
            self.reached.set()
            self.release.wait(60)
        return super().now()


def _projection_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("signet-projection")]


def test_close_waits_for_a_computation_under_way_and_nothing_writes_after(
    config: Config, caplog: pytest.LogCaptureFixture
) -> None:
    clock = HeldClock()
    app = SignetApp.open(config, embedder=HashEmbedder(64), llm=None, clock=clock)
    for i in range(6):
        app.remember(f"note {i} about topic {i % 3}")
    assert isinstance(app.projection.get(2), Pending)
    assert clock.reached.wait(60), "the projection never ran"
    # Released only after close() began: close must still be waiting for the thread then.
    threading.Timer(0.3, clock.release.set).start()
    with caplog.at_level(logging.WARNING):
        app.close()
    assert _projection_threads() == [], "a projection thread outlived app.close()"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    store = Store.open(config.db_path)
    try:  # dropped, not half written: the next request computes it again
        assert store.reader().execute("SELECT COUNT(*) FROM umap_cache").fetchone()[0] == 0
    finally:
        store.close()


def test_close_is_bounded_when_a_computation_does_not_finish(config: Config) -> None:
    clock = HeldClock()
    app = SignetApp.open(config, embedder=HashEmbedder(64), llm=None, clock=clock)
    app.remember("a single note")
    assert isinstance(app.projection.get(2), Pending)
    assert clock.reached.wait(60), "the projection never ran"
    app.projection.close(timeout_s=0.2)  # returns although the thread is still held
    assert len(_projection_threads()) == 1
    app.projection.get(3)  # closing: no new computation starts
    assert len(_projection_threads()) == 1
    clock.release.set()
    app.close()
    assert _projection_threads() == []
