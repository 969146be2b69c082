"""Accesses are recorded off the read path (store/accesses.py): a get or a `touch` recall only
buffers them, the one writer writes them in a batch, nothing is lost when a write fails, and
what an access changes (access_count, last_accessed, the rehearsal boost, the decay clock)
follows once written."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from signet.app import SignetApp
from signet.clock import ManualClock
from signet.config import Config
from signet.store.accesses import AccessRecorder
from signet.store.backend import SqliteCore
from signet.store.connection import DatabaseError, connect
from signet.store.db import Store
from signet.types import RecallQuery


def test_a_get_records_an_access_that_the_writer_writes_later(app: SignetApp, backend: str) -> None:
    memory_id = app.remember("The deploy key lives in the vault").id
    assert app.get(memory_id, access=True).access_count == 0
    app.get(memory_id, access=True)
    assert app.memory.accesses.pending() == {memory_id: 2}
    assert app.get(memory_id).access_count == 0  # nothing written on the read path
    assert app.flush_accesses() == 1  # two reads, one row written
    memory = app.get(memory_id)
    assert memory.access_count == 2 and memory.last_accessed is not None
    assert app.memory.accesses.pending() == {}


def test_the_flusher_thread_writes_without_being_asked(app: SignetApp, backend: str) -> None:
    memory_id = app.remember("Standup moved to Thursday").id
    app.get(memory_id, access=True)
    deadline = time.monotonic() + 20
    while app.get(memory_id).access_count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert app.get(memory_id).access_count == 1


def test_recording_never_waits_for_the_writer(app: SignetApp) -> None:
    memory_id = app.remember("The cat is named Whiskers").id
    writer_holds = threading.Event()
    release = threading.Event()

    def hold_the_writer() -> None:
        with app.store.write_tx():
            writer_holds.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_writer)
    holder.start()
    assert writer_holds.wait(10)
    reader = threading.Thread(target=lambda: [
        app.get(memory_id, access=True),
        app.recall(RecallQuery("cat Whiskers", mode="keyword", touch=True)),
    ])
    reader.start()
    reader.join(20)
    read_while_held = not reader.is_alive()
    release.set()
    holder.join()
    reader.join()
    assert read_while_held, "a read with an access waited for the write lock"
    app.flush_accesses()
    assert app.get(memory_id).access_count == 2


def test_a_failed_write_keeps_the_accesses_for_the_next(app: SignetApp) -> None:
    memory_id = app.remember("Billing is written in Go").id
    impatient = Store.open(app.config.db_path, busy_timeout_ms=50)
    recorder = AccessRecorder(SqliteCore(impatient).add_accesses, interval_s=3600)
    blocker = connect(app.config.db_path)
    try:
        recorder.record([memory_id])
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        with pytest.raises(DatabaseError):
            recorder.flush()
        assert recorder.pending() == {memory_id: 1}
        recorder.record([memory_id])
        blocker.execute("ROLLBACK")
        assert recorder.flush() == 1
    finally:
        blocker.close()
        recorder.close()
        impatient.close()
    assert app.get(memory_id).access_count == 2


def test_close_writes_what_is_pending(app: SignetApp) -> None:
    memory_id = app.remember("The office plant is a ficus").id
    app.memory.accesses.interval_s = 3600
    app.get(memory_id, access=True)
    app.close()
    with SignetApp.open(app.config, embedder=None) as again:
        assert again.get(memory_id).access_count == 1


def test_a_later_batch_never_moves_last_accessed_back(app: SignetApp, backend: str) -> None:
    memory_id = app.remember("Alice owns svc-5").id
    app.memory.accesses.record([memory_id], at="2030-01-02T00:00:00.000Z")
    app.flush_accesses()
    app.memory.accesses.record([memory_id], at="2030-01-01T00:00:00.000Z")
    app.flush_accesses()
    memory = app.get(memory_id)
    assert memory.access_count == 2 and memory.last_accessed == "2030-01-02T00:00:00.000Z"


def test_frozen_mutations_record_no_access(app: SignetApp) -> None:
    memory_id = app.remember("The release train leaves on Tuesdays").id
    app.close()
    cfg = app.config
    frozen = cfg.replace(pipeline=dataclasses.replace(cfg.pipeline, mutations_frozen=True))
    with SignetApp.open(frozen, embedder=None) as readonly:
        readonly.get(memory_id, access=True)
        assert readonly.recaller.accesses.pending() == {}


def test_a_got_memory_gets_the_rehearsal_boost_and_its_decay_clock_reset(config: Config) -> None:
    """What the seeds say an access changes: the rehearsal boost, and importance decay counted
    from the last access (an old memory, just read, ranks as fresh)."""
    clock = ManualClock()
    with SignetApp.open(config, embedder=None, llm=None, clock=clock) as app:
        _rehearsal_and_decay(app, clock)


def _rehearsal_and_decay(app: SignetApp, clock: ManualClock) -> None:
    old = app.remember("The backup job runs nightly at two", importance=0.9).id
    twin = app.remember("The backup job runs nightly at three", importance=0.9).id
    clock.advance(days=60)  # both written 60 days ago, never accessed since
    query = RecallQuery("backup job nightly", mode="keyword")
    before = {h.memory.id: h for h in app.recall(query).hits}
    assert "rehearsal" not in before[old].adjustments
    app.get(old, access=True)
    app.flush_accesses()
    after = {h.memory.id: h for h in app.recall(query).hits}
    assert "rehearsal" in after[old].adjustments and "rehearsal" not in after[twin].adjustments
    assert after[old].score > before[old].score
    assert after[old].score > after[twin].score
    assert after[twin].score == pytest.approx(before[twin].score)



def test_a_full_buffer_is_written_at_once_and_what_it_dropped_is_logged(
    app: SignetApp, caplog: pytest.LogCaptureFixture
) -> None:
    ids = [app.remember(f"Service {n} is owned by team {n}").id for n in range(3)]
    recorder = AccessRecorder(app.backend.core.add_accesses, interval_s=3600, max_pending=2)
    try:
        with caplog.at_level("WARNING", logger="signet.store.accesses"):
            recorder.record(ids)  # the third does not fit
            deadline = time.monotonic() + 20  # a real thread: wait for it, not for the hour
            while app.get(ids[0]).access_count == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert recorder.pending() == {}, "a full buffer waited for the interval"
            assert recorder.dropped == 1
            assert [app.get(i).access_count for i in ids] == [1, 1, 0]
            assert "1 accesses not counted" in caplog.text
    finally:
        recorder.close()


def test_a_touch_recall_records_and_only_the_flush_writes(app: SignetApp, backend: str) -> None:
    """Recall never writes: its `touch` is recorded, and the flush (here, or the flusher's)
    adds it in the database, on either store."""
    memory_id = app.remember("The backup window is at two in the morning").id
    app.memory.accesses.interval_s = 3600  # only an explicit flush writes in this test
    hits = app.recall(RecallQuery("backup window", mode="keyword", touch=True)).hits
    assert [h.memory.id for h in hits] == [memory_id]
    assert app.memory.accesses.pending() == {memory_id: 1}
    assert app.get(memory_id).access_count == 0
    app.recall(RecallQuery("backup window", mode="keyword"))  # no touch: no access
    assert app.flush_accesses() == 1
    assert app.get(memory_id).access_count == 1 and app.memory.accesses.pending() == {}
