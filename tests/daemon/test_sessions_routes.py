"""The session routes over real HTTP: import (content and path), idempotency, listing, search,
clear errors, and scoped tokens that see nothing of other scopes' sessions."""

from __future__ import annotations

from pathlib import Path

from auth_tokens import auth, issue
from fakes.transcripts import claude_code, conversation

TURNS = [("user", "The staging cluster is called Heron."), ("assistant", "Heron, noted.")]


def test_a_transcript_posted_twice_is_stored_once_and_listed(serve, backend: str) -> None:
    s = serve()
    body = {"harness": "claude-code", "content": claude_code(TURNS), "project": "infra"}
    first = s.client.post("/api/sessions/abc/transcript", json=body)
    again = s.client.post("/api/sessions/abc/transcript", json=body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["status"] == "unchanged"
    listed = s.client.get("/api/sessions").json()
    assert listed["total"] == 1 and listed["items"][0]["session_id"] == "abc"
    assert "content" not in listed["items"][0]
    shown = s.client.get("/api/sessions/abc").json()
    assert [m["text"] for m in shown["messages"]] == [t for _, t in TURNS]
    found = s.client.get("/api/sessions/search", params={"q": "Heron"}).json()["items"]
    assert [x["session_id"] for x in found] == ["abc"]


def test_a_path_import_reads_the_harness_file(serve, backend: str, tmp_path: Path) -> None:
    s = serve()
    file = tmp_path / "t.jsonl"
    file.write_text(claude_code(conversation(2)), "utf-8")
    reply = s.client.post("/api/sessions/from-file/transcript",
                          json={"harness": "claude-code", "path": str(file)})
    assert reply.status_code == 201 and reply.json()["session"]["message_count"] == 4


def test_bad_imports_get_a_clear_4xx_and_unknown_sessions_404(serve, backend: str) -> None:
    s = serve()
    bad = s.client.post("/api/sessions/x/transcript",
                        json={"harness": "claude-code", "content": "{not json\n{}\n"})
    # Well-formed JSON holding no transcript: 422 `unprocessable`, naming the line.
    assert bad.status_code == 422 and "line 1 is not valid JSON" in bad.json()["error"]
    assert bad.json()["code"] == "unprocessable"
    both = s.client.post("/api/sessions/x/transcript",
                         json={"harness": "generic", "content": "User: hi", "path": "/tmp/x"})
    assert both.status_code == 400 and "exactly one" in both.json()["error"]
    unknown = s.client.post("/api/sessions/x/transcript", json={"harness": "vim", "content": "User: hi"})
    assert unknown.status_code == 400 and "harness" in unknown.json()["error"]
    assert "claude-code" in unknown.json()["error"]  # the accepted ones are named
    assert s.client.get("/api/sessions/nope").status_code == 404
    assert s.client.get("/api/sessions").json()["total"] == 0


def test_a_scoped_token_sees_nothing_of_other_scopes_sessions(serve, backend: str, tmp_path: Path) -> None:
    s = serve()
    agent_a = auth(issue(s.app, "agent", agent="agent-a", project="alpha"))
    agent_b = auth(issue(s.app, "agent", agent="agent-b"))
    body = {"harness": "claude-code", "content": claude_code(TURNS)}
    mine = s.client.post("/api/sessions/shared-id/transcript", json=body, headers=agent_a)
    assert mine.status_code == 201
    assert mine.json()["session"]["project"] == "alpha"
    # Agent b imports the same id into its own scope: a new session, nothing said about a's.
    theirs = s.client.post("/api/sessions/shared-id/transcript",
                           json={**body, "content": claude_code(conversation(1))}, headers=agent_b)
    assert theirs.status_code == 201
    assert s.client.get("/api/sessions", headers=agent_b).json()["total"] == 1
    b_view = s.client.get("/api/sessions/shared-id", headers=agent_b).json()
    assert "Heron" not in str(b_view)
    assert s.client.get("/api/sessions/search", params={"q": "Heron"}, headers=agent_b).json()["items"] == []
    assert s.client.get("/api/sessions/search", params={"q": "Heron"}, headers=agent_a).json()["items"]
    other_project = s.client.get("/api/sessions", params={"project": "beta"}, headers=agent_a)
    assert other_project.status_code == 403
    by_path = s.client.post("/api/sessions/p/transcript", headers=agent_a,
                            json={"harness": "generic", "path": "/etc/hostname"})
    assert by_path.status_code == 403
    readonly = auth(issue(s.app, "readonly"))
    assert s.client.post("/api/sessions/r/transcript", json=body, headers=readonly).status_code == 403
    assert s.client.get("/api/sessions").json()["total"] == 2  # the unscoped admin sees both


def test_lineage_threads_reindex_and_forget_over_http(serve, backend: str) -> None:
    s = serve()
    body = {"harness": "claude-code", "content": claude_code(conversation(6, decision=True)),
            "project": "infra"}
    assert s.client.post("/api/sessions/s1/transcript", json=body).status_code == 201
    s.app.run_pipeline_until_idle(only=("summary",))
    (thread,) = s.client.get("/api/threads").json()["items"]
    assert thread["thread"] == "project:infra" and thread["summaries"] == 1
    head = s.client.get("/api/threads/project:infra").json()
    assert "banker's rounding" in head["head"]
    up = s.client.get("/api/lineage/s1").json()["up"]
    assert [u["kind"] for u in up] == ["summary"]
    outsider = auth(issue(s.app, "agent", agent="agent-b"))
    assert s.client.get("/api/lineage/s1", headers=outsider).status_code == 404
    assert s.client.get("/api/threads", headers=outsider).json()["items"] == []
    assert s.client.delete("/api/sessions/s1", headers=outsider).status_code == 404
    assert s.client.post("/api/artifacts/reindex", headers=outsider).status_code == 403
    assert s.client.post("/api/artifacts/reindex").json()["indexed"] == 1
    gone = s.client.delete("/api/sessions/s1", params={"reason": "privacy"})
    assert gone.status_code == 200 and len(gone.json()["removed_paths"]) == 3
    assert s.client.get("/api/sessions/s1").status_code == 404
    assert s.client.post("/api/artifacts/reindex").json()["indexed"] == 0


def test_lineage_takes_a_memorys_short_id_inside_the_callers_scope(serve, backend: str) -> None:
    s = serve()
    made = s.app.remember("The cache is flushed every hour", project="infra")
    short = made.id[:8]
    node = s.client.get(f"/api/lineage/{short}").json()["node"]
    assert node == {"kind": "memory", "id": made.id, "content": "The cache is flushed every hour"}
    outsider = auth(issue(s.app, "agent", agent="agent-b"))
    assert s.client.get(f"/api/lineage/{short}", headers=outsider).status_code == 404


def test_a_scoped_token_cannot_read_the_rendered_memory_md(serve, backend: str) -> None:
    s = serve()
    s.app.remember("The alpha launch code name is Bluebird", project="alpha", importance=0.9)
    assert s.client.post("/api/memory/synthesize").status_code == 200
    assert "Bluebird" in s.client.get("/api/identity/MEMORY.md").json()["content"]
    scoped = auth(issue(s.app, "agent", project="beta"))
    assert s.client.get("/api/identity/MEMORY.md", headers=scoped).status_code == 403
    assert s.client.get("/api/identity/SOUL.md", headers=scoped).status_code != 403
    assert s.client.post("/api/memory/synthesize", headers=scoped).status_code == 403


def test_a_real_daemon_summarises_an_imported_session_in_the_background(tmp_path: Path, daemons) -> None:
    import time

    import httpx
    from daemon_process import free_port, make_workspace

    ws = make_workspace(tmp_path / "ws")
    daemon = daemons(ws, free_port())
    daemon.wait_healthy()
    file = tmp_path / "claude.jsonl"
    file.write_text(claude_code(conversation(6, decision=True), session_id="bg-1"), "utf-8")
    reply = httpx.post(f"{daemon.url}/api/sessions/bg-1/transcript", headers=daemon.headers(),
                       json={"harness": "claude-code", "path": str(file), "project": "ops"})
    assert reply.status_code == 201 and reply.json()["summary_job"]
    deadline = time.monotonic() + 60
    status = None
    while time.monotonic() < deadline and status != "summarized":
        time.sleep(0.5)
        status = httpx.get(f"{daemon.url}/api/sessions/bg-1", headers=daemon.headers()).json()["summary_status"]
    assert status == "summarized"
    assert (ws / "memory" / "sessions" / "2026-11-20-bg-1--summary.md").is_file()


def test_the_compaction_and_session_end_hooks_hand_the_transcript_over(serve, backend: str) -> None:
    s = serve()
    base = {"harness": "claude-code", "session_id": "h1", "cwd": "/work/infra"}
    first = s.client.post("/api/hooks/pre-compaction",
                          json={**base, "transcript": claude_code(TURNS)})
    assert first.status_code == 200, first.text
    opened = first.json()["session"]
    assert opened["status"] == "created" and opened["summary_job"] is None
    assert opened["session"]["ended_at"] is None and opened["session"]["project"] == "infra"
    more = [*TURNS, ("user", "And production is Osprey."), ("assistant", "Osprey, noted.")]
    end = s.client.post("/api/hooks/session-end", json={**base, "transcript": claude_code(more)})
    closed = end.json()["session"]
    assert (closed["status"], closed["added"]) == ("appended", 2) and closed["summary_job"]
    assert closed["session"]["ended_at"] is not None
    found = s.client.get("/api/sessions/search", params={"q": "Osprey"}).json()["items"]
    assert [x["session_id"] for x in found] == ["h1"]
    nothing = s.client.post("/api/hooks/session-end", json=base)  # no transcript: nothing to hand
    assert nothing.status_code == 200 and nothing.json()["session"] is None


def test_two_daemons_on_one_database_share_sessions_and_summarise_each_once(serve, pg_url: str) -> None:
    """Two in-process daemons, each with its own workspace, on one PostgreSQL database."""
    import threading

    from signet.config import StoreConfig

    a = serve(store=StoreConfig(backend="postgres", url=pg_url))
    b = serve(store=StoreConfig(backend="postgres", url=pg_url))
    turns = conversation(6, decision=True)
    started = a.client.post("/api/sessions/shared/transcript", json={
        "harness": "claude-code", "content": claude_code(turns[:6]), "project": "infra",
        "ended": False})
    assert started.status_code == 201 and started.json()["summary_job"] is None
    # b holds none of a's files: it shows the messages from the row's cleaned text.
    shown = b.client.get("/api/sessions/shared").json()
    assert [m["text"] for m in shown["messages"]] == [t for _, t in turns[:6]]
    ended = b.client.post("/api/sessions/shared/transcript", json={
        "harness": "claude-code", "content": claude_code(turns), "project": "infra"})
    assert ended.json()["status"] == "appended" and ended.json()["summary_job"]
    # Both daemons' summary workers at once: the job is leased and summarised once.
    runs = [threading.Thread(target=s.app.run_pipeline_until_idle, kwargs={"only": ("summary",)})
            for s in (a, b)]
    for run in runs:
        run.start()
    for run in runs:
        run.join(60)
    assert a.sql("SELECT status, attempts FROM summary_jobs") == [("completed", 1)]
    assert len(a.sql("SELECT id FROM memories WHERE type = 'summary'")) == 1
    assert b.client.get("/api/sessions/shared").json()["summary_status"] == "summarized"
    (thread,) = b.client.get("/api/threads").json()["items"]
    assert thread["summaries"] == 1
    # MEMORY.md synthesis runs on one daemon at a time: while a holds the lock, b's is a 409.
    with a.app.sessions.store.one_at_a_time("memory-md-synthesis") as held:
        assert held
        busy = b.client.post("/api/memory/synthesize")
        assert busy.status_code == 409 and "another daemon" in busy.json()["error"]
    assert b.client.post("/api/memory/synthesize").status_code == 200


def test_the_transcript_around_a_memory_is_there_for_recalls_expand(serve, backend: str) -> None:
    """Sessions.excerpts, the lookup recall's `expand` calls, and recall with expand, on the
    served store."""
    s = serve()
    turns = [("user", "Good morning."), ("assistant", "Morning!"),
             ("user", "My sister Ines is visiting Lisbon in May."), ("assistant", "Noted.")]
    assert s.client.post("/api/sessions/sess-42/transcript", json={
        "harness": "claude-code", "content": claude_code(turns)}).status_code == 201
    ids = [s.client.post("/api/memory/remember", json={"content": content}, headers=headers).json()["id"]
           for content, headers in (("Ines visits Lisbon in May", {"X-Signet-Session": "sess-42"}),
                                    ("Lisbon has steep hills", {}))]
    memories = [s.app.get(memory_id) for memory_id in ids]
    found = s.app.sessions.excerpts(memories)
    assert list(found) == [ids[0]]
    assert "User: My sister Ines is visiting Lisbon in May." in found[ids[0]]
    # Recall over HTTP with expand: the memory from the session carries it, the other nothing.
    hits = s.client.post("/api/memory/recall", json={"query": "Lisbon", "expand": True}).json()
    by_content = {h["content"]: h.get("transcript") for h in hits["results"]}
    assert by_content == {"Ines visits Lisbon in May": found[ids[0]], "Lisbon has steep hills": None}
