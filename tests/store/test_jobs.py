"""The durable job queue on a real SQLite file: dedup, leasing, retries, the dead letter,
the reaper, retention, restarts, two processes leasing at once, and the lease query's plan."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from signet.errors import InvalidInput
from signet.store import jobs
from signet.store.db import Store
from signet.types import format_ts, parse_ts

T0 = "2026-11-29T12:00:00.000Z"


def at(t0: str = T0, **delta: float) -> str:
    return format_ts(parse_ts(t0) + timedelta(**delta))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "memories.db")
    yield opened
    opened.close()


def add(store: Store, job_type: str = "extract", now: str = T0, **kw: object) -> str:
    with store.write_tx() as conn:
        job_id = jobs.enqueue(conn, job_type, now=now, **kw)  # type: ignore[arg-type]
    assert job_id is not None
    return job_id


def take(store: Store, now: str = T0, **kw: object) -> jobs.Job | None:
    with store.write_tx() as conn:
        return jobs.lease(conn, now, **kw)  # type: ignore[arg-type]


def get(store: Store, job_id: str) -> jobs.Job:
    job = jobs.get(store.reader(), job_id)
    assert job is not None
    return job


# --- enqueue ------------------------------------------------------------------------------------


def test_enqueue_writes_a_pending_row_with_zero_attempts(store: Store) -> None:
    job_id = add(store, memory_id="m1", payload={"k": [1, 2]}, max_attempts=5)
    job = get(store, job_id)
    assert (job.status, job.attempts, job.max_attempts) == ("pending", 0, 5)
    assert (job.memory_id, job.job_type, job.payload) == ("m1", "extract", {"k": [1, 2]})
    assert job.created_at == job.updated_at == T0
    assert job.leased_at is None and job.result is None


def test_a_pending_job_for_the_same_memory_and_type_drops_the_duplicate(store: Store) -> None:
    first = add(store, memory_id="m1")
    with store.write_tx() as conn:
        assert jobs.enqueue(conn, "extract", memory_id="m1", now=T0) is None
        # another type, or another memory, is not a duplicate
        assert jobs.enqueue(conn, "hints", memory_id="m1", now=T0) is not None
        assert jobs.enqueue(conn, "extract", memory_id="m2", now=T0) is not None
    assert [j.id for j in jobs.list_jobs(store.reader(), job_type="extract", status="pending")
            if j.memory_id == "m1"] == [first]


def test_a_leased_job_blocks_a_duplicate_but_a_completed_one_does_not(store: Store) -> None:
    add(store, memory_id="m1")
    leased = take(store)
    assert leased is not None
    with store.write_tx() as conn:
        assert jobs.enqueue(conn, "extract", memory_id="m1", now=T0) is None
        assert jobs.complete(conn, leased.id, at(seconds=1))
        assert jobs.enqueue(conn, "extract", memory_id="m1", now=at(seconds=2)) is not None


def test_document_jobs_are_deduplicated_by_document(store: Store) -> None:
    add(store, "document_ingest", document_id="d1")
    with store.write_tx() as conn:
        assert jobs.enqueue(conn, "document_ingest", document_id="d1", now=T0) is None
        assert jobs.enqueue(conn, "document_ingest", document_id="d2", now=T0) is not None


def test_jobs_without_a_target_are_never_duplicates(store: Store) -> None:
    add(store, "summary", payload={"session": "s1"})
    add(store, "summary", payload={"session": "s1"})
    assert jobs.depths(store.reader()) == {"summary": {"pending": 2}}


def test_an_unknown_job_type_is_invalid_input(store: Store) -> None:
    with store.write_tx() as conn, pytest.raises(InvalidInput):
        jobs.enqueue(conn, "transmogrify", memory_id="m1", now=T0)
    with store.write_tx() as conn, pytest.raises(InvalidInput):
        jobs.lease(conn, T0, job_types=["transmogrify"])


# --- lease ----------------------------------------------------------------------------------


def test_lease_takes_the_oldest_pending_job_and_counts_the_attempt(store: Store) -> None:
    newer = add(store, memory_id="b", now=at(seconds=5))
    older = add(store, memory_id="a", now=T0)
    same_ms = add(store, memory_id="c", now=at(seconds=5))
    order = []
    for _ in range(3):
        job = take(store, at(seconds=10))
        assert job is not None
        assert (job.status, job.attempts, job.leased_at) == ("leased", 1, at(seconds=10))
        order.append(job.id)
    assert order == [older, newer, same_ms]
    assert take(store, at(seconds=10)) is None
    assert get(store, older).status == "leased"


def test_lease_filters_by_job_type(store: Store) -> None:
    add(store, "extract", memory_id="m1", now=T0)
    hints = add(store, "hints", memory_id="m1", now=at(seconds=1))
    job = take(store, at(seconds=2), job_types=["hints", "embed"])
    assert job is not None and job.id == hints
    assert take(store, at(seconds=2), job_types=["embed"]) is None
    assert take(store, at(seconds=2), job_types=[]) is None


def test_lease_waits_for_run_after(store: Store) -> None:
    job_id = add(store, memory_id="m1")
    first = take(store, T0)
    assert first is not None
    with store.write_tx() as conn:
        assert jobs.fail(conn, job_id, "boom", at(seconds=1), retry_delay_ms=10_000) == "pending"
    assert get(store, job_id).run_after == at(seconds=11)
    assert take(store, at(seconds=10, milliseconds=999)) is None
    again = take(store, at(seconds=11))
    assert again is not None and again.id == job_id and again.attempts == 2


def test_lease_accepts_other_iso_spellings_of_now(store: Store) -> None:
    add(store, memory_id="m1", now="2026-11-29T12:00:00+00:00")
    job = take(store, "2026-11-29T13:00:00.000+01:00")
    assert job is not None and job.created_at == T0 and job.leased_at == T0


def test_lease_many_claims_the_oldest_of_one_type_up_to_the_limit_in_order(store: Store) -> None:
    newer = add(store, "embed", memory_id="b", now=at(seconds=5))
    older = add(store, "embed", memory_id="a", now=T0)
    same_ms = add(store, "embed", memory_id="c", now=at(seconds=5))
    add(store, "extract", memory_id="a", now=T0)  # another type: not claimed
    later = add(store, "embed", memory_id="d", now=T0)
    with store.write_tx() as conn:
        assert jobs.fail(conn, jobs.lease(conn, T0, job_types=["embed"]).id,  # type: ignore[union-attr]
                         "boom", T0, retry_delay_ms=60_000) == "pending"
    # `older` was leased and failed above with a retry in a minute: not claimable yet.
    with store.write_tx() as conn:
        first = jobs.lease_many(conn, at(seconds=10), "embed", 2)
        rest = jobs.lease_many(conn, at(seconds=10), "embed", 10)
        assert jobs.lease_many(conn, at(seconds=10), "embed", 10) == []
    assert [j.id for j in first] == [later, newer] and [j.id for j in rest] == [same_ms]
    assert all((j.status, j.attempts, j.leased_at) == ("leased", 1, at(seconds=10))
               for j in first + rest)
    assert get(store, older).status == "pending"


# --- complete / fail / dead -----------------------------------------------------------------


def test_complete_stores_the_result_and_only_applies_to_leased_jobs(store: Store) -> None:
    job_id = add(store, memory_id="m1")
    with store.write_tx() as conn:
        assert jobs.complete(conn, job_id, T0) is False  # still pending
        assert jobs.complete(conn, "nope", T0) is False
    take(store)
    with store.write_tx() as conn:
        assert jobs.complete(conn, job_id, at(seconds=3), {"facts": 2}) is True
        assert jobs.complete(conn, job_id, at(seconds=4)) is False  # already completed
    job = get(store, job_id)
    assert (job.status, job.completed_at, job.result) == ("completed", at(seconds=3), {"facts": 2})


def test_fail_retries_until_max_attempts_then_the_job_is_dead(store: Store) -> None:
    job_id = add(store, memory_id="m1", max_attempts=2)
    statuses = []
    for attempt in range(2):
        assert take(store, at(minutes=attempt)) is not None
        with store.write_tx() as conn:
            statuses.append(jobs.fail(conn, job_id, f"err {attempt}", at(minutes=attempt)))
    assert statuses == ["pending", "dead"]
    job = get(store, job_id)
    assert (job.status, job.attempts, job.error, job.failed_at) == ("dead", 2, "err 1", at(minutes=1))
    assert take(store, at(minutes=5)) is None


def test_fail_is_empty_for_an_unknown_or_unleased_job(store: Store) -> None:
    job_id = add(store, memory_id="m1")
    with store.write_tx() as conn:
        assert jobs.fail(conn, job_id, "x", T0) == ""
        assert jobs.fail(conn, "nope", "x", T0) == ""
    assert get(store, job_id).error is None


def test_fail_truncates_long_errors(store: Store) -> None:
    job_id = add(store, memory_id="m1")
    take(store)
    with store.write_tx() as conn:
        jobs.fail(conn, job_id, "x" * 5000, T0)
    assert get(store, job_id).error == "x" * 2000


# --- reaper, requeue, release ---------------------------------------------------------------


def test_the_reaper_returns_stale_leases_to_pending_or_dead(store: Store) -> None:
    retry = add(store, memory_id="m1", max_attempts=3)
    last_try = add(store, memory_id="m2", max_attempts=1, now=at(seconds=1))
    fresh = add(store, memory_id="m3", now=at(seconds=2))
    take(store, T0)
    take(store, T0)
    take(store, at(minutes=4))  # leased 2 minutes before the reaper runs: still alive
    with store.write_tx() as conn:
        assert jobs.reap_stale_leases(conn, at(minutes=4, seconds=59), 300_000) == 0
        assert jobs.reap_stale_leases(conn, at(minutes=6), 300_000) == 2
    assert (get(store, retry).status, get(store, retry).error) == ("pending", "lease expired")
    dead = get(store, last_try)
    assert (dead.status, dead.error, dead.failed_at) == ("dead", "lease expired", at(minutes=6))
    assert get(store, fresh).status == "leased"
    again = take(store, at(minutes=6))
    assert again is not None and again.id == retry and again.attempts == 2


def test_requeue_dead_resets_attempts_and_keeps_the_error(store: Store) -> None:
    one = add(store, memory_id="m1", max_attempts=1)
    two = add(store, memory_id="m2", max_attempts=1, now=at(seconds=1))
    for job_id in (one, two):
        take(store, at(seconds=2))
        with store.write_tx() as conn:
            assert jobs.fail(conn, job_id, "model offline", at(seconds=2)) == "dead"
    with store.write_tx() as conn:
        assert jobs.requeue_dead(conn, at(minutes=1), job_ids=[one]) == 1
        assert jobs.requeue_dead(conn, at(minutes=1), job_ids=[]) == 0
    job = get(store, one)
    assert (job.status, job.attempts, job.failed_at, job.error) == (
        "pending", 0, None, "model offline")
    assert get(store, two).status == "dead"
    with store.write_tx() as conn:
        assert jobs.requeue_dead(conn, at(minutes=1)) == 1
    leased = take(store, at(minutes=2))
    assert leased is not None and leased.id == one


def test_release_leases_gives_the_attempt_back(store: Store) -> None:
    job_id = add(store, memory_id="m1")
    other = add(store, memory_id="m2")
    take(store)
    take(store)
    with store.write_tx() as conn:
        assert jobs.release_leases(conn, at(seconds=1), job_ids=[other]) == 1
        assert jobs.release_leases(conn, at(seconds=1)) == 1
    job = get(store, job_id)
    assert (job.status, job.attempts, job.leased_at) == ("pending", 0, None)


# --- reads ----------------------------------------------------------------------------------


def test_depths_counts_jobs_by_type_and_status(store: Store) -> None:
    add(store, "extract", memory_id="m1")
    add(store, "extract", memory_id="m2", now=at(seconds=1))
    add(store, "embed", memory_id="m1")
    take(store, job_types=["extract"])
    assert jobs.depths(store.reader()) == {
        "extract": {"leased": 1, "pending": 1},
        "embed": {"pending": 1},
    }


def test_list_jobs_and_last_errors(store: Store) -> None:
    ids = [add(store, memory_id=f"m{i}", now=at(seconds=i)) for i in range(3)]
    assert [j.id for j in jobs.list_jobs(store.reader())] == ids[::-1]
    assert [j.id for j in jobs.list_jobs(store.reader(), limit=1, offset=1)] == [ids[1]]
    for i in range(2):
        job = take(store, at(seconds=10 + i))
        assert job is not None
        with store.write_tx() as conn:
            jobs.fail(conn, job.id, f"e{i}", at(seconds=10 + i), retry_delay_ms=60_000)
    assert [(j.id, j.error) for j in jobs.last_errors(store.reader())] == [
        (ids[1], "e1"), (ids[0], "e0")]
    with pytest.raises(InvalidInput):
        jobs.list_jobs(store.reader(), status="sleeping")


# --- retention --------------------------------------------------------------------------------


def finish(store: Store, job_id: str, now: str, *, ok: bool) -> None:
    leased = take(store, now)
    assert leased is not None and leased.id == job_id
    with store.write_tx() as conn:
        if ok:
            assert jobs.complete(conn, job_id, now)
        else:
            assert jobs.fail(conn, job_id, "boom", now) == "dead"


def test_purge_deletes_old_completed_and_dead_jobs_up_to_the_limit(store: Store) -> None:
    def run(job_type: str, memory_id: str, day: int, *, ok: bool, max_attempts: int = 3) -> str:
        job_id = add(store, job_type, memory_id=memory_id, now=at(days=day),
                     max_attempts=max_attempts)
        finish(store, job_id, at(days=day), ok=ok)
        return job_id

    old_done = [run("extract", f"c{i}", i, ok=True) for i in range(3)]
    old_dead = run("embed", "d1", 3, ok=False, max_attempts=1)
    new_dead = run("embed", "d2", 10, ok=False, max_attempts=1)
    new_done = run("extract", "c9", 25, ok=True)
    pending = add(store, "hints", memory_id="p1")
    now = at(days=35)
    with store.write_tx() as conn:
        counts = jobs.purge(conn, now, completed_before=at(now, days=-14),
                            dead_before=at(now, days=-30), limit=2)
    assert counts == (2, 1)
    remaining = {j.id for j in jobs.list_jobs(store.reader(), limit=100)}
    assert remaining == {old_done[2], new_done, new_dead, pending}
    assert old_dead not in remaining
    with store.write_tx() as conn:
        assert jobs.purge(conn, now, completed_before=at(now, days=-14),
                          dead_before=at(now, days=-30), limit=2) == (1, 0)
        with pytest.raises(InvalidInput):
            jobs.purge(conn, now, completed_before=at(now, days=1), dead_before=now, limit=2)


# --- durability -----------------------------------------------------------------------------


def test_pending_and_leased_jobs_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    first = Store.open(path)
    pending = add(first, memory_id="m1", now=at(seconds=1))
    leased = add(first, memory_id="m2", now=T0)
    assert take(first).id == leased  # type: ignore[union-attr]
    first.close()

    second = Store.open(path)
    try:
        assert get(second, pending).status == "pending"
        assert get(second, leased).status == "leased"
        with second.write_tx() as conn:
            assert jobs.reap_stale_leases(conn, at(minutes=6), 300_000) == 1
        assert [take(second, at(minutes=6)).id for _ in range(2)] == [leased, pending]  # type: ignore[union-attr]
    finally:
        second.close()


LEASER = """
import json, sys, time
from pathlib import Path
from signet.store import jobs
from signet.store.db import Store
from signet.types import utc_now

db, ready, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
store = Store.open(db)
ready.touch()
while not go.exists():
    time.sleep(0.001)
taken = []
while True:
    with store.write_tx() as conn:
        job = jobs.lease(conn, utc_now())
    if job is None:
        break
    taken.append(job.id)
    with store.write_tx() as conn:
        assert jobs.complete(conn, job.id, utc_now(), {"by": sys.argv[2]})
    time.sleep(0.001)  # let the other process in, so the two really interleave
store.close()
print(json.dumps(taken))
"""


def test_two_processes_never_lease_the_same_job(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    store = Store.open(path)
    with store.write_tx() as conn:
        expected = {jobs.enqueue(conn, "extract", memory_id=f"m{i}", now=T0) for i in range(300)}
    store.close()
    go = tmp_path / "go"
    readies = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [
        subprocess.Popen([sys.executable, "-c", LEASER, str(path), str(r), str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for r in readies
    ]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    a, b = results
    assert a and b, "both processes should have leased some jobs"
    assert len(a) + len(b) == 300
    assert set(a).isdisjoint(b)
    assert set(a) | set(b) == expected
    reopened = Store.open(path)
    try:
        assert jobs.depths(reopened.reader()) == {"extract": {"completed": 300}}
    finally:
        reopened.close()


# --- the hot query's plan -------------------------------------------------------------------


@pytest.mark.parametrize("job_types", [None, ["extract", "hints"], ["embed"], "many"])
def test_the_lease_query_uses_an_index_without_a_sort(
    store: Store, job_types: list[str] | str | None
) -> None:
    for i in range(20):
        add(store, "extract", memory_id=f"m{i}", now=at(seconds=i))
    statements: list[str] = []
    with store.write_tx() as conn:
        conn.set_trace_callback(statements.append)
        try:
            if job_types == "many":
                jobs.lease_many(conn, T0, "embed", 128)
            else:
                jobs.lease(conn, T0, job_types=job_types)  # type: ignore[arg-type]
        finally:
            conn.set_trace_callback(None)
        (claim,) = [s for s in statements if s.lstrip().upper().startswith("UPDATE")]
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + claim)]
    memory_jobs_steps = [step for step in plan if "memory_jobs" in step]
    assert memory_jobs_steps and all("USING" in step and "INDEX" in step for step in memory_jobs_steps), plan
    assert not any(step.startswith("SCAN memory_jobs") for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan
