"""The autonomous maintenance run: checks that find each kind of damage, repairs only in execute
mode and within the per-run limit, `frozen` as a hard stop, every run and action recorded, and
the scheduled worker honouring `enabled`, the mode and the interval."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from signet.app import SignetApp
from signet.config import AutonomousConfig, Config, StoreConfig
from signet.providers.hash_embedder import HashEmbedder
from signet.store.backend import CoreStore

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def open_app(config: Config, **autonomous: object) -> SignetApp:
    auto = dataclasses.replace(AutonomousConfig(), **autonomous)
    pipeline = dataclasses.replace(config.pipeline, autonomous=auto, enabled=False)
    return SignetApp.open(config.replace(pipeline=pipeline), embedder=HashEmbedder(64))


def break_fts(app: SignetApp) -> None:
    """Drop one memory's row from the exact index behind the trigger's back."""
    with app.store.write_tx() as conn:
        row = conn.execute("SELECT rowid, content, hints, tags FROM memories LIMIT 1").fetchone()
        conn.execute(
            "INSERT INTO memories_fts(memories_fts, rowid, content, hints, tags)"
            " VALUES ('delete', ?, ?, ?, ?)", tuple(row),
        )


@pytest.fixture
def broken(config: Config):
    app = open_app(config)
    for text in ("the quick brown fox", "a lazy dog sleeps", "coffee at nine"):
        app.remember(text)
    break_fts(app)
    yield app
    app.close()


def fts_rows(app: SignetApp) -> int:
    return app.store.reader().execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]


def test_observe_reports_a_broken_fts_count_and_changes_nothing(broken: SignetApp) -> None:
    report = broken.run_maintenance(execute=False, now=T0)
    assert report["mode"] == "observe" and report["problems"] == ["fts"]
    assert report["checks"]["fts"] == {
        "ok": False, "memories": 3, "memories_fts": 2, "memories_stem_fts": 3,
    }
    assert report["actions"] == [] and fts_rows(broken) == 2


def test_execute_rebuilds_the_index_and_records_what_changed(broken: SignetApp) -> None:
    report = broken.run_maintenance(execute=True, now=T0)
    [action] = report["actions"]
    assert action["action"] == "rebuild_fts"
    assert action["changed"]["before"]["memories_fts"] == 2
    assert action["changed"]["after"]["memories_fts"] == 3
    assert report["ok"] is True and report["after"]["fts"]["ok"] is True and fts_rows(broken) == 3
    recorded = broken.maintenance_report()
    assert recorded["ok"] is True and recorded["runs"][0]["id"] == report["id"]
    assert recorded["recent_actions"][0]["action"] == "rebuild_fts"
    assert broken.status()["maintenance"]["last_run"]["actions"] == 1


def test_frozen_stops_every_repair_but_still_reports(config: Config) -> None:
    app = open_app(config, frozen=True)
    try:
        app.remember("the quick brown fox")
        break_fts(app)
        report = app.run_maintenance(execute=True, now=T0)
        assert report["frozen"] is True and report["skipped"] == ["fts"]
        assert report["actions"] == [] and fts_rows(app) == 0
    finally:
        app.close()


@pytest.fixture
def on_backend(config: Config, backend: str, request: pytest.FixtureRequest) -> Config:
    """`config` on the store the `backend` parameter names (SQLite, or a fresh PostgreSQL
    database)."""
    if backend == "sqlite":
        return config
    return config.replace(store=StoreConfig(backend="postgres", url=request.getfixturevalue("pg_url")))


def job_store(app: SignetApp) -> CoreStore:
    """The app's job queue as the workers use it, on either backend."""
    return app.backend.core


def test_a_dead_job_is_requeued_once_and_a_stuck_lease_released(on_backend: Config) -> None:
    app = open_app(on_backend)
    queue = job_store(app)
    try:
        dead = queue.enqueue("hints", memory_id="m1", now="2026-01-01T00:00:00.000Z",
                             max_attempts=1)
        stuck = queue.enqueue("hints", memory_id="m2", now="2026-01-01T00:00:00.000Z")
        assert dead and stuck
        leased = queue.lease("2026-01-01T00:00:00.000Z")
        assert leased is not None and leased.id == dead
        queue.fail(leased.id, "boom", "2026-01-01T00:00:01.000Z")
        assert queue.lease("2026-01-01T00:00:02.000Z") is not None  # never finished
        first = app.run_maintenance(execute=True, now=T0)
        done = {a["action"]: a["changed"] for a in first["actions"]}
        assert done["release_stale_leases"] == {"released": 1}
        assert done["requeue_dead_jobs"] == {"requeued": 1, "job_ids": [dead]}
        # It dies again: maintenance does not requeue the same job a second time.
        while (job := queue.lease("2026-01-01T00:00:03.000Z")) is not None:
            if job.id == dead:
                assert queue.fail(job.id, "boom again", "2026-01-01T00:00:04.000Z") == "dead"
            else:
                queue.complete(job.id, "2026-01-01T00:00:04.000Z")
        second = app.run_maintenance(execute=True, now=T0 + timedelta(hours=2))
        assert "requeue_dead_jobs" not in {a["action"] for a in second["actions"]}
        assert second["checks"]["jobs"]["dead_requeued_before"] == 1
        assert [r["id"] for r in app.maintenance_report()["runs"]] == [second["id"], first["id"]]
    finally:
        app.close()


def drop_vectors(app: SignetApp) -> None:
    if app.backend.name == "postgres":
        with app.backend.core.pool.connection() as conn:  # type: ignore[attr-defined]
            conn.execute("DELETE FROM embeddings")
        return
    with app.store.write_tx() as conn:
        conn.execute("DELETE FROM embeddings")


def test_missing_vectors_are_backfilled_within_the_per_run_limit(on_backend: Config) -> None:
    app = open_app(on_backend, max_repairs_per_run=2)
    try:
        for n in range(5):
            app.remember(f"memory number {n} about topic {n}")
        drop_vectors(app)
        report = app.run_maintenance(execute=True, now=T0)
        [action] = [a for a in report["actions"] if a["action"] == "backfill_embeddings"]
        assert action["changed"]["missing"] == 5 and action["changed"]["enqueued"] == 2
        assert app.job_depths()["embed"]["pending"] == 2
    finally:
        app.close()


def test_orphan_entities_are_deleted_and_source_drift_reindexed(config: Config) -> None:
    app = open_app(config)
    try:
        app.remember("window one about the Mustang", source_id="s1", source_type="chat")
        app.remember("window two about coupons", source_id="s1", source_type="chat")
        with app.store.write_tx() as conn:
            conn.execute(
                "INSERT INTO entities(id, name, canonical_name, created_at, updated_at)"
                " VALUES ('e1', 'Nobody', 'nobody', '2026-01-01', '2026-01-01')"
            )
            conn.execute("UPDATE memory_sources SET members = 7")
        observed = app.run_maintenance(execute=False, now=T0)
        assert set(observed["problems"]) == {"graph", "sources"}
        report = app.run_maintenance(execute=True, now=T0)
        done = {a["action"]: a["changed"] for a in report["actions"]}
        assert done["delete_orphan_entities"]["entity_ids"] == ["e1"]
        assert done["reindex_sources"]["sources"] == 1
        assert report["ok"] is True
    finally:
        app.close()


def test_a_large_wal_is_checkpointed(config: Config) -> None:
    app = open_app(config, wal_checkpoint_mb=1)
    try:
        app.remember_many([{"content": f"{n} " + "words " * 400} for n in range(600)])
        wal = config.db_path.with_name("memories.db-wal")
        assert wal.stat().st_size > 1024 * 1024
        report = app.run_maintenance(execute=True, now=T0)
        [action] = [a for a in report["actions"] if a["action"] == "checkpoint_wal"]
        assert action["changed"]["wal_bytes_after"] < action["changed"]["wal_bytes_before"]
    finally:
        app.close()


def test_the_scheduled_worker_honours_enabled_mode_and_interval(config: Config) -> None:
    off = open_app(config)
    try:
        [worker] = [w for w in off.workers() if w.name == "maintenance"]
        assert worker.tick(T0) is False and off.maintenance_report()["runs"] == []
    finally:
        off.close()
    app = open_app(config, enabled=True, maintenance_mode="execute", interval_ms=60_000)
    try:
        app.remember("the quick brown fox")
        break_fts(app)
        [worker] = [w for w in app.workers() if w.name == "maintenance"]
        assert worker.tick(T0) is True
        assert fts_rows(app) == 1
        assert worker.tick(T0 + timedelta(seconds=30)) is False
        assert worker.tick(T0 + timedelta(seconds=61)) is False  # ran, found nothing to repair
        runs = app.maintenance_report()["runs"]
        assert [r["trigger"] for r in runs] == ["scheduled", "scheduled"]
        assert runs[0]["report"]["ok"] is True and runs[0]["report"]["actions"] == []
        assert runs[1]["report"]["actions"][0]["action"] == "rebuild_fts"
    finally:
        app.close()


def test_with_mutations_frozen_a_run_reports_but_writes_nothing(config: Config) -> None:
    app = open_app(config)
    app.remember("the quick brown fox")
    break_fts(app)
    app.close()
    frozen = config.replace(pipeline=dataclasses.replace(config.pipeline, mutations_frozen=True))
    with SignetApp.open(frozen, embedder=HashEmbedder(64)) as still:
        report = still.run_maintenance(execute=True, now=T0)
        assert report["skipped"] == ["fts"] and report["id"] is None
        assert still.maintenance_report()["runs"] == [] and fts_rows(still) == 0
