"""The operator's store contract (store/operations.py: JobAdmin, RepairStore, RetentionStore):
one suite on both backends, a real SQLite file and a real PostgreSQL database.

Each test takes `pair`: a CoreStore (to write memories and jobs as the app does) and the
OpsStore beside it on the same database, and `second`, another handle on the same store (what
a second daemon holds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from signet.errors import InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.store.backend import Backend, CoreStore
from signet.store.operations import OpsStore
from signet.store.pipeline import PipelineStore
from signet.types import Actor, NewMemory

T0 = "2026-01-01T00:00:00.000Z"
T1 = "2026-01-01T00:00:01.000Z"
T9 = "2026-06-01T00:00:00.000Z"
MODEL = "unit-model"
PIPELINES: dict[int, PipelineStore] = {}  # each opened core's pipeline seam
ACTOR = Actor(name="tester", type="operator")

Pair = tuple[CoreStore, OpsStore]


@pytest.fixture
def opener(open_store: Callable[..., Backend]) -> Callable[[], Pair]:
    def open_one() -> Pair:
        backend = open_store()
        PIPELINES[id(backend.core)] = backend.pipeline()
        return backend.core, backend.operations()

    return open_one


@pytest.fixture
def pair(opener: Callable[[], Pair]) -> Pair:
    return opener()


def remember(core: CoreStore, content: str, *, vector: np.ndarray | None = None,
             jobs: tuple[str, ...] = ()) -> str:
    norm = normalize_content(content)
    memory_id, _ = core.insert_memory(
        NewMemory(content=content), storage=norm.storage, normalized=norm.normalized,
        content_hash=norm.content_hash, actor=ACTOR, now=T0, vector=vector,
        model=MODEL if vector is not None else None, jobs=jobs,
    )
    return memory_id


def dead_job(core: CoreStore, memory_id: str) -> str:
    job_id = core.enqueue("embed", now=T0, memory_id=memory_id, max_attempts=1)
    assert job_id is not None
    leased = core.lease(T0, job_types=["embed"])
    assert leased is not None and leased.id == job_id
    assert core.fail(job_id, "boom", T1) == "dead"
    return job_id


def archive(core: CoreStore, memory_id: str, now: str) -> None:
    """A cold-tier snapshot, as the pipeline takes one before changing a memory."""
    memory = core.get_memory(memory_id)
    assert memory is not None
    with PIPELINES[id(core)].write() as tx:
        tx.archive_cold(memory, reason="superseded", archived_by="t", now=now)


def test_jobs_are_listed_counted_found_by_short_id_and_requeued(pair: Pair) -> None:
    core, ops = pair
    ids = [remember(core, f"fact number {i}") for i in range(3)]
    dead = dead_job(core, ids[0])
    pending = core.enqueue("extract", now=T1, memory_id=ids[1])
    assert pending is not None
    assert [j.id for j in ops.list_jobs(status=None, job_type=None, limit=10, offset=0)] == [
        pending, dead]
    assert [j.id for j in ops.list_jobs(status="dead", job_type=None, limit=10, offset=0)] == [dead]
    assert ops.list_jobs(status=None, job_type="extract", limit=10, offset=1) == []
    with pytest.raises(InvalidInput):
        ops.list_jobs(status="sleeping", job_type=None, limit=10, offset=0)
    assert ops.job_depths() == {"embed": {"dead": 1}, "extract": {"pending": 1}}
    found = ops.find_job(dead[:8])
    assert found is not None and found.error == "boom"
    assert ops.find_job("nothing-like-a-job") is None
    with pytest.raises(NotFound):
        ops.find_job("ffff0000")
    assert [j.id for j in ops.last_errors(10)] == [dead]
    assert ops.requeue_dead(T9, [dead[:10]]) == 1
    again = ops.find_job(dead)
    assert again is not None and (again.status, again.attempts) == ("pending", 0)
    assert ops.requeue_dead(T9) == 0
    assert ops.summary_counts() == {}


def test_a_daemon_releases_only_the_leases_it_still_holds(opener: Callable[[], Pair]) -> None:
    (core, ops), (_, other) = opener(), opener()
    first, second = (remember(core, c, jobs=("embed",)) for c in ("one fact", "another fact"))
    mine = core.lease(T0, job_types=["embed"])
    theirs = core.lease(T1, job_types=["embed"])
    assert mine and theirs and mine.leased_at == T0 and {mine.memory_id, theirs.memory_id} == {
        first, second}
    # A lease the caller no longer holds (the reaper gave it to someone else since) stays.
    assert other.release_leases(T9, [(mine.id, T1)]) == 0
    assert other.release_leases(T9, [(mine.id, T0)]) == 1
    back = ops.find_job(mine.id)
    assert back is not None and (back.status, back.attempts, back.leased_at) == ("pending", 0, None)
    assert ops.find_job(theirs.id).status == "leased"  # type: ignore[union-attr]
    assert ops.release_leases(T9, []) == 0
    assert ops.reap_stale_leases(T9, 60_000) == 1
    assert ops.job_depths() == {"embed": {"pending": 2}}


def test_missing_vectors_are_audited_and_enqueued_once(pair: Pair) -> None:
    core, ops = pair
    remember(core, "embedded already", vector=np.ones(4, dtype=np.float32))
    bare = [remember(core, f"no vector yet {i}") for i in range(3)]
    assert ops.embedding_audit(MODEL) == {"memories": 4, "embedded": 1, "missing": 3,
                                          "stale": 0, "vectors": 1}
    assert ops.enqueue_missing_embeds(MODEL, 2, T1) == (2, 2)
    assert ops.enqueue_missing_embeds(MODEL, 10, T1) == (3, 1)  # two were queued already
    assert sorted(j.memory_id or "" for j in ops.list_jobs(
        status="pending", job_type="embed", limit=10, offset=0)) == sorted(bare)
    assert ops.count_live() == 4


def test_runs_are_recorded_and_a_dead_job_is_requeued_once_across_daemons(
    opener: Callable[[], Pair],
) -> None:
    (core, ops), (_, other) = opener(), opener()
    dead = dead_job(core, remember(core, "a fact"))
    assert ops.job_counts(T0)["dead"] == 1
    assert ops.requeue_dead_once(T1, 10) == ([dead], 1)
    again = core.lease(T1, job_types=["embed"])
    assert again is not None and again.id == dead
    assert (ops.job_counts(T0)["stuck"], ops.job_counts(T9)["stuck"]) == (0, 1)
    assert core.fail(dead, "boom again", T1) == "dead"  # it died again: a person looks now
    second = dead_job(core, remember(core, "a second fact"))
    assert other.requeue_dead_once(T1, 10) == ([second], 1)
    assert ops.requeue_dead_once(T1, 10) == ([], 0)
    assert ops.job_counts(T0)["dead_requeued_before"] == 1
    first = [second]
    action = {"at": T1, "action": "requeue_dead_jobs", "changed": {"job_ids": first}}
    run_id = ops.record_run(started_at=T0, finished_at=T1, mode="execute", trigger="test",
                            report={"ok": True}, actions=[action])
    runs = other.latest_runs(5)
    assert [(r["id"], r["report"]) for r in runs] == [(run_id, {"ok": True})]
    assert other.recent_actions(5) == [{"run_id": run_id, **action}]


def test_the_lexical_index_checks_and_rebuilds(pair: Pair) -> None:
    core, ops = pair
    remember(core, "the quick brown fox")
    assert ops.lexical_check()["ok"] is True and ops.lexical_counts()["ok"] is True
    assert ops.lexical_rebuild()
    assert ops.lexical_check()["ok"] is True
    assert ops.storage(1 << 40)["ok"] is True


def expire(core: CoreStore, content: str, **kw: Any) -> str:
    memory_id = remember(core, content, **kw)
    assert core.forget(memory_id, actor=ACTOR, now=T0) is not None
    return memory_id


def test_retention_steps_purge_only_what_expired(pair: Pair) -> None:
    core, ops = pair
    shared = np.ones(4, dtype=np.float32)
    gone = expire(core, "an old tombstone", vector=np.full(4, 2, dtype=np.float32))
    keeps_vector = expire(core, "shared text", vector=shared)
    live = remember(core, "a live memory")
    archive(core, live, T0)
    ids = ops.expired_tombstones(T9, 10)
    assert sorted(ids) == sorted([gone, keeps_vector])
    # A memory recovered between steps is live again: nothing touches it.
    core.recover(keeps_vector, actor=ACTOR, now=T1)
    with core.graph().writing() as graph:
        falcon = graph.upsert_entity("Falcon", agent_id="default", now=T0)
        graph.link_mention(gone, falcon, mention_text="Falcon", confidence=1.0, now=T0)
        graph.link_mention(live, graph.upsert_entity("Osprey", agent_id="default", now=T0),
                           mention_text="Osprey", confidence=1.0, now=T0)
    assert ops.count_mention_links(ids) == 1
    assert ops.purge_graph_links(ids, T9) == {"links": 1, "entities": 1, "orphans": 1}
    assert ops.graph_counts() == {"orphan_entities": 0, "orphan_mentions": 0}
    assert ops.count_tombstone_vectors(ids, T9) == 1
    assert ops.purge_tombstone_vectors(ids, T9) == 1
    assert ops.delete_tombstones(ids, T9) == 1
    assert core.get_memory(gone) is None and core.get_memory(keeps_vector) is not None
    assert core.has_vector(normalize_content("shared text").content_hash, MODEL)
    assert ops.count_older("cold", T9, 10) == 1 and ops.delete_older("cold", T9, 10) == 1
    assert ops.count_older("history", T1, 10) == ops.delete_older("history", T1, 10) > 0
    dead_job(core, live)
    assert ops.count_jobs("dead", T9, 10) == 1
    assert ops.purge_jobs(T9, completed_before=T9, dead_before=T9, limit=10) == (0, 1)
    with pytest.raises(InvalidInput):
        ops.purge_jobs(T0, completed_before=T9, dead_before=T0, limit=10)


def test_one_retention_at_a_time_across_daemons(opener: Callable[[], Pair]) -> None:
    (_, ops), (_, other) = opener(), opener()
    with ops.exclusive("retention") as held:
        assert held
        with other.exclusive("retention") as also:
            # One SQLite workspace has one daemon and one writer: nothing to hold there.
            assert also == (ops.backend == "sqlite")
    with other.exclusive("retention") as held_after:
        assert held_after


def test_an_entity_nothing_refers_to_is_an_orphan_and_goes(pair: Pair) -> None:
    core, ops = pair
    with core.graph().writing() as graph:
        lonely = graph.upsert_entity("Nobody", agent_id="default", now=T0)
    assert ops.graph_counts() == {"orphan_entities": 1, "orphan_mentions": 0}
    assert ops.delete_orphans(10, mentions=True, entities=True) == (0, [lonely])
    assert ops.graph_counts() == {"orphan_entities": 0, "orphan_mentions": 0}
