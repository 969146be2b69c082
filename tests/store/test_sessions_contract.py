"""The sessions store contract (store/session_store.py): one suite on both backends, a real
SQLite file and a real PostgreSQL database (tests/pg_server.py).

Every test takes `opener`, parametrised over "sqlite" and "postgres": each call opens another
independent handle on the same store (what a second daemon would hold) and returns its
(CoreStore, SessionStore) pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from signet.errors import Conflict
from signet.normalize import normalize_content
from signet.store.artifacts import ArtifactRow
from signet.store.backend import Backend, CoreStore
from signet.store.session_store import SessionStore
from signet.store.sessions import SessionRow, SummaryOutcome, session_key
from signet.types import Actor, MemoryScope, NewMemory

T0 = "2026-11-29T12:00:00.000Z"
T1 = "2026-11-29T12:30:00.000Z"
T2 = "2026-11-29T14:00:00.000Z"

Pair = tuple[CoreStore, SessionStore]


@pytest.fixture
def opener(open_store: Callable[..., Backend]) -> Callable[..., Pair]:
    def open_one(folder: str = "a") -> Pair:
        backend = open_store(folder)
        return backend.core, backend.sessions()

    return open_one


def session(sid: str, content: str, *, agent: str = "default", project: str | None = None,
            ended: str | None = T0, last: str = T0) -> SessionRow:
    return SessionRow(
        session_key=session_key(agent, project, sid), session_id=sid, agent_id=agent,
        project=project, harness="claude-code", content=content, raw_hash="r-" + sid,
        content_hash="c-" + sid, message_count=content.count("\n") + 1, started_at=T0,
        last_event_at=last, ended_at=ended, path=f"memory/transcripts/{sid}.jsonl",
        raw_path=f"memory/transcripts/raw/{sid}.orig", summary_status=None, created_at=T0,
        updated_at=T0,
    )


def save(store: SessionStore, row: SessionRow, trigger: str | None = "session_end") -> str | None:
    return store.save_import(row, created=True, summary_trigger=trigger, now=T0,
                             max_attempts=3)[1]


def artifact(path: str, *, kind: str = "summary", thread: str = "project:infra",
             key: str | None = None, agent: str = "default", condenses: tuple[str, ...] = (),
             content: str = "A summary.", project: str | None = "infra") -> ArtifactRow:
    return ArtifactRow(
        agent_id=agent, source_path=path, source_sha256="s" * 64, source_kind=kind,
        session_id=None, session_key=key, session_token=key, project=project, harness=None,
        captured_at=T0, started_at=T0, ended_at=T1, memory_sentence="gist of " + path,
        content=content, updated_at=T0, artifact_id="art_" + path.replace("/", "_"),
        thread_key=thread, condenses=condenses, parent_path=None,
    )


# --- transcripts -------------------------------------------------------------------------------


def test_an_import_is_stored_listed_and_queues_one_live_summary(opener: Callable[..., Pair]) -> None:
    _core, store = opener()
    row = session("s1", "User: where is staging\nAssistant: Frankfurt", project="infra")
    stored, job = store.save_import(row, created=True, summary_trigger="session_end", now=T0,
                                    max_attempts=3)
    assert stored == row and job is not None
    # Another handle (a second daemon) sees it at once; creating it again is a Conflict.
    _other_core, other = opener()
    assert other.get(row.session_key) == row
    with pytest.raises(Conflict):
        save(other, row)
    # Appended: the row is updated; the live summary job is not queued twice.
    longer = replace(row, content=row.content + "\nUser: thanks", message_count=3, ended_at=T1)
    again, second = other.save_import(longer, created=False, summary_trigger="session_end",
                                      now=T1, max_attempts=3)
    assert (again.message_count, again.ended_at, again.updated_at, second) == (3, T1, T1, None)
    save(store, session("s2", "User: hello", agent="other"))
    assert [r.session_id for r in store.find("s1", agent_id=None, project="infra")] == ["s1"]
    assert store.find("s1", agent_id="other", project=None) == []
    rows, total = store.list_page(agent_id="other", project=None, harness=None, limit=10, offset=0)
    assert ([r.session_id for r in rows], total) == (["s2"], 1)
    _rows, total = store.list_page(agent_id=None, project=None, harness="codex", limit=10, offset=0)
    assert total == 0


def test_search_ranks_stems_snips_and_keeps_scopes_apart(opener: Callable[..., Pair]) -> None:
    _core, store = opener()
    save(store, session("deploys", "User: we keep deploying the billing service on Fridays\n"
                        "Assistant: Friday deploys of billing are risky", agent="a"))
    save(store, session("lunch", "User: the cafeteria serves soup", agent="a"))
    for n in range(6):  # another scope's sessions, all about deploys
        save(store, session(f"b{n}", "User: deploy deploy deploy the deploy pipeline", agent="b"))
    found = store.search("deploys billing", agent_id="a", project=None, limit=5)
    assert [r.session_id for r, _score, _snip in found] == ["deploys"]
    row, score, snip = found[0]
    assert score > 0 and "[" in snip and "]" in snip and "billing" in snip.lower()
    assert store.search("soup", agent_id="b", project=None, limit=5) == []
    assert store.search("   ", agent_id=None, project=None, limit=5) == []
    # A scoped caller's score comes from its own slice: the same as in a store holding only
    # that slice, whatever other scopes hold.
    _core2, alone = opener("b")
    save(alone, session("deploys", row.content, agent="a"))
    save(alone, session("lunch", "User: the cafeteria serves soup", agent="a"))
    (_row, alone_score, _snip), = alone.search("deploys billing", agent_id="a", project=None, limit=5)
    assert alone_score == pytest.approx(score)


def test_a_transcript_too_wordy_for_one_index_entry_still_imports_and_is_found(
    opener: Callable[..., Pair],
) -> None:
    """PostgreSQL's tsvector holds 1 MB: a transcript with more distinct words is indexed
    without positions rather than refused (migration 004)."""
    _core, store = opener()
    words = " ".join(f"tok{n:06d}x" for n in range(90_000))
    save(store, session("huge", f"User: {words} zebrafish"))
    found = store.search("zebrafish", agent_id=None, project=None, limit=3)
    assert [r.session_id for r, _s, _n in found] == ["huge"]


def test_idle_open_sessions_are_closed_once_with_a_summary(opener: Callable[..., Pair]) -> None:
    _core, store = opener()
    save(store, session("idle", "User: hi", ended=None, last=T0), trigger=None)
    save(store, session("busy", "User: hi", ended=None, last=T2), trigger=None)
    assert store.close_idle(T1, T2, 3) == 1
    assert store.get(session_key("default", None, "idle")).ended_at == T0  # type: ignore[union-attr]
    assert store.get(session_key("default", None, "busy")).ended_at is None  # type: ignore[union-attr]
    assert store.close_idle(T1, T2, 3) == 0
    # Its inactivity summary is the live one: a session-end import queues no second job.
    idle = store.get(session_key("default", None, "idle"))
    assert idle is not None
    assert store.save_import(idle, created=False, summary_trigger="session_end", now=T2,
                             max_attempts=3)[1] is None


def test_memories_of_a_session_and_their_excerpt_sessions(opener: Callable[..., Pair]) -> None:
    core, store = opener()
    save(store, session("s1", "User: Heron is staging", project="infra"))
    norm = normalize_content("Staging is called Heron")
    written = core.write_memory(
        NewMemory(content="Staging is called Heron", session_id="s1", project="infra"),
        storage=norm.storage, normalized=norm.normalized, content_hash=norm.content_hash,
        actor=Actor(), now=T0,
    ).result
    assert written is not None
    memory_id = written.id
    assert store.memories_of("default", "s1", "infra") == [memory_id]
    assert store.memories_of("default", "s1", "other") == []
    found = store.for_memories([("default", "s1", "infra"), ("default", "s1", "other")])
    assert list(found) == [("default", "s1")] and found[("default", "s1")].project == "infra"
    assert store.memory(memory_id, MemoryScope(project="infra")) is not None
    assert store.memory(memory_id, MemoryScope(project="beta")) is None


# --- artifacts and the head -------------------------------------------------------------------


def test_artifacts_reindex_threads_and_forgetting_with_a_tombstone(
    opener: Callable[..., Pair],
) -> None:
    _core, store = opener()
    row = session("s1", "User: hi", project="infra")
    save(store, row)
    summaries = {
        ("default", f"memory/sessions/s{n}.md"): artifact(
            f"memory/sessions/s{n}.md", key=row.session_key if n == 1 else None,
            content="## Open questions\n- Who owns staging?" if n == 2 else "Done.")
        for n in (1, 2)
    }
    arc = artifact("memory/threads/infra/arc-0001.md", kind="arc",
                   condenses=tuple(p for _a, p in summaries))
    rows = {**{k: replace(v, parent_path=arc.source_path) for k, v in summaries.items()},
            ("default", arc.source_path): arc,
            ("default", "gone.md"): artifact("gone.md", thread="general")}
    assert store.replace_artifacts(rows) == 0
    del rows[("default", "gone.md")]
    assert store.replace_artifacts(rows) == 1
    assert store.artifact("default", "gone.md") is None
    assert store.artifact_by_id(arc.artifact_id or "") == arc
    assert [a.source_path for a in store.artifacts_of_session(row.session_key)] == [
        "memory/sessions/s1.md"]
    assert store.in_thread("default", "project:infra", "summary", uncondensed=True) == []
    assert len(store.in_thread("default", "project:infra", "summary")) == 2
    (thread,) = store.threads("default", None)
    assert (thread["thread"], thread["summaries"], thread["arcs"], thread["last"]) == (
        "project:infra", 2, 1, T1)
    assert store.threads("someone-else", None) == []
    assert store.open_questions("default") == ["Who owns staging?"]
    assert sorted(store.latest_summaries("default")) == ["## Open questions\n- Who owns staging?",
                                                         "Done."]
    assert store.latest_summaries("someone-else") == []
    assert store.latest_gists("default")["infra"].startswith("gist of")
    store.forget_session(row, ["memory/sessions/s1.md"], ["memory/sessions/s1.md", "t.jsonl"],
                         "privacy", T2)
    assert store.get(row.session_key) is None
    assert store.artifact("default", "memory/sessions/s1.md") is None
    assert store.tombstoned() == {("default", row.session_key)}


def test_the_head_reads_memories_projects_and_when_memory_last_changed(
    opener: Callable[..., Pair],
) -> None:
    core, store = opener()
    assert store.last_change() is None
    for content, pinned, at in (("Never deploy on Fridays", True, T0), ("Ana leads infra", False, T1)):
        norm = normalize_content(content)
        core.write_memory(
            NewMemory(content=content, pinned=pinned, project="infra", importance=0.9),
            storage=norm.storage, normalized=norm.normalized, content_hash=norm.content_hash,
            actor=Actor(), now=at,
        )
    save(store, session("s1", "User: hi", project="infra", last=T2))
    heads = store.head_memories("default")
    assert [(m["content"], bool(m["pinned"])) for m in heads][0] == ("Never deploy on Fridays", True)
    (project,) = store.head_projects("default", T0)
    assert (project["project"], project["sessions"], project["memories"], project["last"]) == (
        "infra", 1, 2, T2)
    assert store.head_projects("default", "2027-01-01T00:00:00.000Z") == []
    assert store.last_change() == T1
    assert store.head_entities("default") == []


def test_one_at_a_time_across_handles(opener: Callable[..., Pair]) -> None:
    core, store = opener()
    _core2, other = opener()
    with store.one_at_a_time("task") as first:
        with other.one_at_a_time("task") as second, other.one_at_a_time("another") as third:
            assert first and third
            # PostgreSQL: another process holds it. SQLite: one writer per file, always granted.
            assert second is (core.backend == "sqlite")
    with other.one_at_a_time("task") as again:
        assert again


# --- the summary queue --------------------------------------------------------------------------


def test_summary_jobs_lease_once_fail_reap_and_finish(opener: Callable[..., Pair]) -> None:
    core, store = opener()
    _core2, other = opener()
    row = session("s1", "User: hi", project="infra")
    job_id = save(store, row)
    job = store.lease_summary(T0)
    assert job is not None and (job.id, job.attempts, job.status) == (job_id, 1, "leased")
    assert other.lease_summary(T0) is None  # one job: leased once across handles
    store.fail_summary(job, "provider down", T0)
    assert store.reap_summary_leases(T2, 60_000) == 0  # failed back to pending, nothing leased
    job = other.lease_summary(T1)
    assert job is not None and job.attempts == 2
    assert store.reap_summary_leases(T2, 60_000) == 1  # stale: handed back
    stale, job = job, store.lease_summary(T2)
    assert job is not None and job.attempts == 3
    with pytest.raises(RuntimeError):  # the stale lease no longer holds it: nothing written
        other.finish_summary(stale, SummaryOutcome({"messages": 1}, "summarized",
                                                   row.session_key), T2)
    written: list[str] = []

    def write() -> str:
        norm = normalize_content("Summary: staging is Heron")
        memory_id, _ = core.insert_memory(
            NewMemory(content="Summary: staging is Heron", type="summary", source_id="s1",
                      project="infra"),
            storage=norm.storage, normalized=norm.normalized, content_hash=norm.content_hash,
            actor=Actor(), now=T2,
        )
        written.append(memory_id)
        return memory_id

    summary = artifact("memory/sessions/s1.md", key=row.session_key)

    def write_then_fail() -> str:
        write()
        raise RuntimeError("the process dies here")

    with pytest.raises(RuntimeError):  # one transaction: the memory goes with the rest
        store.finish_summary(job, SummaryOutcome({"messages": 4}, "summarized", row.session_key,
                                                 artifact=summary, memory=write_then_fail), T2)
    assert other.memories_of("default", "s1", "infra") == []
    assert other.artifact("default", summary.source_path) is None
    written.clear()
    store.finish_summary(job, SummaryOutcome(
        {"artifact": summary.source_path, "messages": 4}, "summarized", row.session_key,
        artifact=summary, memory=write), T2)
    assert other.get(row.session_key).summary_status == "summarized"  # type: ignore[union-attr]
    assert other.covered(row.session_key) == 4
    assert other.artifact("default", summary.source_path) == summary
    assert other.memories_of("default", "s1", "infra") == written
    assert store.lease_summary(T2) is None
    # A second session's job, failed on its last attempt, is dead.
    save(store, session("s2", "User: hello"))
    job = store.lease_summary(T2)
    assert job is not None
    store.fail_summary(replace(job, max_attempts=1), "bad", T2)
    assert store.lease_summary(T2) is None


def test_condensing_and_the_gates_reads(opener: Callable[..., Pair]) -> None:
    core, store = opener()
    children = [artifact(f"memory/sessions/s{n}.md") for n in (1, 2)]
    store.replace_artifacts({("default", c.source_path): c for c in children})
    arc = artifact("memory/threads/infra/arc-0001.md", kind="arc",
                   condenses=tuple(c.source_path for c in children))
    store.add_condensed(arc, [c.source_path for c in children])
    assert [c.parent_path for c in store.in_thread("default", "project:infra", "summary")] == [
        arc.source_path, arc.source_path]
    assert store.in_thread("default", "project:infra", "arc") == [arc]
    norm = normalize_content("The billing service runs in Frankfurt")
    core.insert_memory(NewMemory(content="The billing service runs in Frankfurt"),
                       storage=norm.storage, normalized=norm.normalized,
                       content_hash=norm.content_hash, actor=Actor(), now=T0)
    assert store.unseen_terms({"billing", "frankfurt", "zeppelin"}) == 1
    assert store.unseen_terms(set()) == 0
    assert store.known_entities("default", {}) == []
    assert store.dominant_community("default", []) is None
