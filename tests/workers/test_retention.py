"""The retention worker on a real store seeded with old and live rows: each sweep removes
exactly what has expired, step by step in the seed's order, capped per step, and never a live
memory (nor the vector a live memory shares with a purged tombstone)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from signet import injection
from signet.app import SignetApp
from signet.config import Config, PipelineConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.store import cold as cold_sql
from signet.store import jobs as jobs_sql
from signet.types import RecallQuery, utc_now
from signet.workers.retention_worker import STEPS, RetentionWorker
from write_paths import inline

DAY = timedelta(days=1)


def _count(app: SignetApp, sql: str, *params: object) -> int:
    return int(app.store.reader().execute(sql, params).fetchone()[0])


@pytest.fixture
def app(tmp_path: Path):
    cfg = inline(Config.default(tmp_path / "ws")).replace(pipeline=PipelineConfig(enabled=False))
    opened = SignetApp.open(cfg, embedder=HashEmbedder(64), llm=None)
    yield opened
    opened.close()


def _seed(app: SignetApp) -> dict[str, str]:
    graph = {"entities": [{"name": "Alice"}, {"name": "Rome"}]}
    ids = {
        "live": app.remember("Alice drinks oolong tea", graph={"entities": [{"name": "Alice"}]},
                             idempotency_key="k-live").id,
        "tomb": app.remember("Alice visited Rome in May", graph=graph).id,
        "shared": app.remember("the build uses ruff").id,
    }
    app.forget(ids["tomb"])
    app.forget(ids["shared"])
    # The same content again, live: it shares the tombstone's content hash and vector.
    ids["readded"] = app.remember("the build uses ruff").id
    now = utc_now()
    with app.store.write_tx() as conn:
        cold_sql.archive(conn, app.get(ids["live"]), reason="test", archived_by="t", now=now)
        for kind in ("completed", "dead", "pending"):
            jobs_sql.enqueue(conn, "summary", now=now, payload={"kind": kind}, max_attempts=1)
            if kind != "pending":
                job = jobs_sql.lease(conn, now, job_types=["summary"])
                assert job is not None
                if kind == "completed":
                    jobs_sql.complete(conn, job.id, now)
                else:
                    assert jobs_sql.fail(conn, job.id, "boom", now) == "dead"
    injection.handle(app, "session-start", {"session_id": "s"})  # one ledger row per memory shown
    with app.store.write_tx() as conn:
        conn.execute("DELETE FROM hook_injections WHERE memory_id <> ?", (ids["live"],))
    return ids


def test_a_sweep_inside_every_window_purges_nothing(app: SignetApp) -> None:
    _seed(app)
    report = app.run_retention(now=datetime.now(UTC) + 13 * DAY)
    assert list(report.counts) == list(STEPS)
    # Only the idempotency key (kept 1 day) and the hooks' ledger row (7 days) have expired.
    assert {k: v for k, v in report.counts.items() if v} == {"idempotency_keys": 1, "hook_ledger": 1}
    assert _count(app, "SELECT count(*) FROM memories") == 4


def test_expired_rows_go_in_the_seeds_order_and_live_memories_stay(app: SignetApp) -> None:
    ids = _seed(app)
    tables_before = _count(app, "SELECT count(*) FROM memory_history")
    alice = app.store.reader().execute(
        "SELECT id, mentions FROM entities WHERE canonical_name = 'alice'").fetchone()
    assert alice["mentions"] == 2
    dry = app.run_retention(dry_run=True, now=datetime.now(UTC) + 31 * DAY)
    assert _count(app, "SELECT count(*) FROM memories") == 4  # a dry run changes nothing
    report = app.run_retention(now=datetime.now(UTC) + 31 * DAY)
    assert list(report.counts) == list(STEPS)
    assert dry.counts == report.counts
    assert report.counts == {
        "graph_links": 2, "embeddings": 1, "tombstones": 2, "history": 0,
        "completed_jobs": 1, "dead_jobs": 1, "cold_rows": 0, "idempotency_keys": 1,
        "hook_ledger": 1,
    }
    assert report.entities_removed == 1  # Rome: mentioned by the tombstone only
    # The tombstones are gone, with their FTS rows; the live memories are whole.
    remaining = {r[0] for r in app.store.reader().execute("SELECT id FROM memories")}
    assert remaining == {ids["live"], ids["readded"]}
    assert app.store.reader().execute(
        "SELECT mentions FROM entities WHERE id = ?", (alice["id"],)).fetchone()[0] == 1
    assert _count(app, "SELECT count(*) FROM entities WHERE canonical_name = 'rome'") == 0
    for live in ("live", "readded"):
        memory = app.get(ids[live])
        assert _count(app, "SELECT count(*) FROM embeddings WHERE content_hash = ?",
                      memory.content_hash) == 1
    hits = app.recall(RecallQuery("ruff build", mode="keyword")).hits
    assert ids["readded"] in [h.memory.id for h in hits]
    assert not {h.memory.id for h in hits} & {ids["tomb"], ids["shared"]}
    assert not app.recall(RecallQuery("Rome May", mode="keyword")).hits
    assert _count(app, "SELECT count(*) FROM memory_jobs WHERE status = 'pending'") == 1
    assert _count(app, "SELECT count(*) FROM memory_history") == tables_before
    # Half a year on: history and cold rows expire too; live memories still stay.
    later = app.run_retention(now=datetime.now(UTC) + 181 * DAY)
    assert later.counts["history"] == tables_before and later.counts["cold_rows"] == 1
    assert {r[0] for r in app.store.reader().execute("SELECT id FROM memories")} == remaining


def test_each_step_is_capped_at_the_batch_limit(config: Config) -> None:
    # The limit is the app's configuration from its opening (the services hold that config).
    capped = config.replace(retention=replace(config.retention, batch_limit=2))
    with SignetApp.open(capped, embedder=HashEmbedder(64), llm=None) as app:
        for i in range(5):
            app.forget(app.remember(f"old note number {i}").id)
        at = datetime.now(UTC) + 31 * DAY
        assert [app.run_retention(now=at).counts["tombstones"] for _ in range(4)] == [2, 2, 1, 0]


def test_the_worker_sweeps_once_per_interval(app: SignetApp) -> None:
    app.forget(app.remember("soon gone").id)
    worker = RetentionWorker(app.operations.ops, app.config.retention)
    t0 = datetime.now(UTC) + 31 * DAY
    assert worker.tick(t0) is True
    app.forget(app.remember("gone later").id)
    # Expired already, but the next sweep is due only 6 hours (intervalMs) after the last.
    assert worker.tick(t0 + timedelta(hours=1)) is False
    assert worker.tick(t0 + timedelta(hours=7)) is True
    assert worker.last_report is not None and worker.last_report.counts["tombstones"] == 1


def test_retention_is_one_of_the_apps_workers(app: SignetApp) -> None:
    assert "retention" in [w.name for w in app.workers()]


def test_a_vector_shared_only_by_expired_tombstones_goes_however_far_apart_they_are(
    app: SignetApp,
) -> None:
    # More tombstones than one SQL chunk of ids (400 before): the two that share a content
    # hash fall into different chunks, and each once kept the vector for the other.
    first = app.get(app.remember("the deploy runs on Fridays").id)
    app.forget(first.id)
    for i in range(400):
        app.forget(app.remember(f"filler note {i}").id)
    app.forget(app.remember("the deploy runs on Fridays").id)
    report = app.run_retention(now=datetime.now(UTC) + 31 * DAY)
    assert report.counts["tombstones"] == 402
    assert _count(app, "SELECT count(*) FROM embeddings WHERE content_hash = ?",
                  first.content_hash) == 0
    assert _count(app, "SELECT count(*) FROM embeddings") == 0
