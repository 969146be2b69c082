"""`signet bench load`'s open loop: requests arrive on a seeded Poisson schedule, not as fast as
the clients are answered, and each is timed from its scheduled arrival; every run reports the
clients' own CPU and the embed jobs left waiting."""

from __future__ import annotations

import random
from pathlib import Path

from signet.bench.load import _Plan, format_load, run_load


def _arrivals(rate: float, seconds: float) -> int:
    """How many arrivals the plan's seeded Poisson process has within `seconds`."""
    rng, at, n = random.Random(1729), 0.0, 0
    while at < seconds:
        n += 1
        at += rng.expovariate(rate)
    return n


def test_the_open_loop_hands_out_the_seeded_arrivals_in_order_then_stops() -> None:
    plan = _Plan(0.5, rate=40.0)
    plan.begin()
    due = []
    while (at := plan.next_send()) is not None:
        due.append(at)
    assert len(due) == _arrivals(40.0, 0.5)
    assert due == sorted(due) and due[-1] < plan.deadline


def test_an_open_loop_run_sends_the_offered_requests_not_as_many_as_it_can(tmp_path: Path) -> None:
    result = run_load([4], seconds=2, workdir=tmp_path, rate=15)
    [run] = result["runs"]
    # A closed loop of 4 clients sends hundreds of requests in 2 s; the open loop sends the
    # schedule's arrivals, every one answered.
    assert run["requests"] == _arrivals(15, 2) and run["errors"] == 0
    assert run["offered_rps"] == 15 and run["lost_writes"] == 0
    assert run["client_cpu_ms_per_request"] > 0 and run["embed_backlog"] == 0
    assert "offered" in format_load(result)
    # The remembers took the writer in the foreground lane, read from the daemon's /metrics.
    writer = run["writer"]["foreground"]
    assert writer["turns"] >= run["operations"]["remember"]["count"]
    assert writer["hold_mean_ms"] > 0 and "writer: " in format_load(result)


def test_two_daemons_on_one_postgres_database_lose_nothing_and_run_each_job_once(
    tmp_path: Path, pg_url: str
) -> None:
    """`bench load --daemons 2 --backend postgres`: the clients spread over two daemon
    processes on one database; every acknowledged write is there, and with the deferred
    write path every embed job (enqueued by either daemon, leased by either worker) ran once."""
    result = run_load([4], seconds=2, workdir=tmp_path, embedder="local", daemons=2,
                      store_url=pg_url)
    [run] = result["runs"]
    assert (result["backend"], run["daemons"]) == ("postgres", 2)
    assert run["errors"] == 0 and run["lost_writes"] == 0 and run["acknowledged_writes"] > 0
    jobs = run["embed_jobs"]
    assert jobs["leased_more_than_once"] == 0 and jobs.get("dead", 0) == 0
    assert jobs.get("completed", 0) + run["embed_backlog"] == run["acknowledged_writes"]
    extract = run["extract_jobs"]  # the extraction workers of both daemons share the queue too
    assert extract["leased_more_than_once"] == 0 and extract.get("dead", 0) == 0
    assert sum(n for status, n in extract.items() if status != "leased_more_than_once") == (
        run["acknowledged_writes"])
    assert "2 daemons, one database" in format_load(result)


def test_several_daemons_need_a_shared_database(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(ValueError, match="PostgreSQL store URL"):
        run_load([1], seconds=1, workdir=tmp_path, daemons=2)
