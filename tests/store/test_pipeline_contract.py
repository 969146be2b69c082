"""The pipeline's store contract (store/pipeline.py): one suite on both backends, a real SQLite
file and a real PostgreSQL database (tests/pg_server.py).

What the workers rely on: `write()` is one transaction (everything in it, the memory service's
insert included, commits or rolls back together), a job leased once is not leased again, a
released job keeps its attempt, the cold tier and the review queue take what the controlled
writes put there, and hint search ranks the hints apart from content.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from signet.errors import NotFound
from signet.normalize import normalize_content
from signet.store.backend import Backend, CoreStore
from signet.store.pipeline import PipelineStore
from signet.types import Actor, MemoryFilters, NewMemory

T0 = "2026-11-29T12:00:00.000Z"
T1 = "2026-11-29T12:00:01.000Z"
ACTOR = Actor(name="tester", type="operator")


@pytest.fixture
def store(open_store: Callable[..., Backend]) -> Backend:
    return open_store()


@pytest.fixture
def core(store: Backend) -> CoreStore:
    return store.core


@pytest.fixture
def seam(store: Backend) -> PipelineStore:
    return store.pipeline()


def remember(core: CoreStore, content: str, *, jobs: tuple[str, ...] = (), **fields: object) -> str:
    norm = normalize_content(content)
    written = core.write_memory(
        NewMemory(content=content, **fields), storage=norm.storage,  # type: ignore[arg-type]
        normalized=norm.normalized, content_hash=norm.content_hash, actor=ACTOR, now=T0,
        jobs=jobs,
    ).result
    assert written is not None
    return written.id


def test_write_is_one_transaction_that_rolls_back_whole(core: CoreStore, seam: PipelineStore) -> None:
    memory_id = remember(core, "The user keeps a loyalty card for the grocery store")
    with pytest.raises(RuntimeError), seam.write() as tx:
        assert seam.in_write_tx
        tx.set_hints(memory_id, "where can I get discounts?")
        tx.record(memory_id, "none", ACTOR, T1, reason="probe")
        remember(core, "Inserted inside the transaction by the memory service")
        raise RuntimeError("the worker lost its lease")
    assert not seam.in_write_tx
    assert core.get_memory(memory_id).hints == ""  # type: ignore[union-attr]
    assert [e.event for e in core.history(memory_id)] == ["created"]
    assert core.list_memories(MemoryFilters(), limit=10, offset=0)[1] == 1

    with seam.write() as tx:
        tx.set_hints(memory_id, "where can I get discounts?")
        inner = remember(core, "Inserted inside the transaction by the memory service")
    assert core.get_memory(memory_id).hints == "where can I get discounts?"  # type: ignore[union-attr]
    assert core.get_memory(inner) is not None


def test_a_leased_job_is_leased_once_and_a_release_gives_the_attempt_back(
    core: CoreStore, seam: PipelineStore
) -> None:
    memory_id = remember(core, "The user drives a blue bicycle to work", jobs=("extract",))
    job = seam.lease(T0, job_types=["extract"])
    assert job is not None and job.memory_id == memory_id and job.attempts == 1
    assert seam.lease(T0, job_types=["extract"]) is None
    with seam.write() as tx:
        assert tx.get_job(job.id).status == "leased"  # type: ignore[union-attr]
        tx.release_job(job.id, T1)
    again = seam.lease(T1, job_types=["extract"])
    assert again is not None and (again.id, again.attempts) == (job.id, 1)
    with seam.write() as tx:
        assert tx.fail_job(again.id, "BadResponse: not JSON", T1, retry_delay_ms=0) == "pending"
    third = seam.lease(T1, job_types=["extract"])
    assert third is not None and third.attempts == 2
    with seam.write() as tx:
        assert tx.complete_job(third.id, T1, {"facts": 0})
        assert not tx.complete_job(third.id, T1, {"facts": 0})  # no longer leased
        tx.set_extraction_status(memory_id, "completed", "fake-model")
    done = core.get_memory(memory_id)
    assert done is not None and (done.extraction_status, done.extraction_model) == (
        "completed", "fake-model")


def test_an_update_archives_to_the_cold_tier_and_parks_reviews(
    core: CoreStore, seam: PipelineStore
) -> None:
    memory_id = remember(core, "The backend runs Python 3.10", tags=("infra",))
    new = normalize_content("The backend runs Python 3.12")
    with seam.write() as tx:
        current = tx.get_memory(memory_id)
        assert current is not None
        cold_id = tx.archive_cold(current, reason="refined", archived_by="pipeline", now=T1)
        assert tx.find_live_by_hash(new.content_hash, current.agent_id, None) is None
        tx.update_columns(memory_id, {"content": new.storage, "content_hash": new.content_hash,
                                      "normalized_content": new.normalized, "hints": ""}, T1)
        item = tx.add_review(
            memory_id=memory_id, source_memory_id=None, action="update",
            old_content=new.storage, new_content="The backend runs Python 3.13",
            proposal={"action": "update"}, verdict={"contradicts": True}, reason="contradicts",
            now=T1, target_version=2,
        )
        assert tx.find_live_by_hash(new.content_hash, current.agent_id, None) == memory_id
    updated = core.get_memory(memory_id)
    assert updated is not None and (updated.content, updated.version) == (new.storage, 2)
    assert cold_id >= 1 and isinstance(item, str) and item
    assert [i.id for i in seam.review_items("pending", limit=10)] == [item]
    with seam.write() as tx:
        parked = tx.get_review(item)
        assert tx.get_review("0" * 32) is None
    assert parked is not None and (parked.memory_id, parked.status, parked.target_version) == (
        memory_id, "pending", 2)
    assert parked.proposal == {"action": "update"} and parked.verdict == {"contradicts": True}
    assert seam.review_id(item[:12]) == item
    assert seam.review_id("not-a-prefix") == "not-a-prefix"
    with pytest.raises(NotFound):
        seam.review_id("ffffffffffff" if not item.startswith("ffff") else "000000000000")


def test_vectors_are_read_and_stored_inside_and_outside(core: CoreStore, seam: PipelineStore) -> None:
    memory_id = remember(core, "The user collects vintage fountain pens")
    vector = np.arange(8, dtype=np.float32) / 10
    assert seam.vector_for("h1", "unit-model") is None
    with seam.write() as tx:
        assert not tx.has_vector("h1", "unit-model")
        tx.store_vector("h1", vector, model="unit-model", now=T0, memory_id=memory_id)
        assert tx.has_vector("h1", "unit-model")
    found = seam.vector_for("h1", "unit-model")
    assert found is not None and np.allclose(found, vector)


def test_stored_hints_are_searched_apart_from_content_within_the_filters(
    core: CoreStore, seam: PipelineStore
) -> None:
    """What the hints worker stores through the seam, recall's hint channel finds
    (store/recall_reads.py): by the hints' words only, inside the caller's filters."""
    card = remember(core, "The user has a Target loyalty card", agent_id="alice")
    other = remember(core, "Discounts on car parts are common in spring", agent_id="alice")
    theirs = remember(core, "Bob keeps a membership at the hardware store", agent_id="bob")
    alice = MemoryFilters(agent_id="alice")
    with core.recall_reads(None).reader() as reader:
        assert not reader.has_hints(alice)  # no hints yet: recall skips the channel
    with seam.write() as tx:
        tx.set_hints(card, "where can I get discounts? cheap air filter for my car")
        tx.set_hints(theirs, "where can I get discounts on tools?")
    with core.recall_reads(None).reader() as reader:
        assert reader.has_hints(alice)
        found = [m for m, _ in reader.hints("discounts car", alice, 10)]
        assert found == [card]  # `other` says it in its content, not in hints; bob is out
        assert other not in found and theirs not in found
        assert {m for m, _ in reader.hints("discounts", MemoryFilters(), 10)} == {card, theirs}
