"""The three scope leaks of issue 10, each reproduced over real HTTP against a real daemon
(conftest.serve): dedup across scopes, ambiguous and unscoped idempotency keys, and the
whole-source channel aggregating across projects.

The standard is "a fresh memory of its own": a scoped caller gets exactly the answer it would
get if the other scope's content did not exist, so each test compares the answer with one from
a daemon that never held the other scope's content.
"""

from __future__ import annotations

from typing import Any

import httpx

from auth_tokens import auth, issue

REMEMBER = "/api/memory/remember"
RECALL = "/api/memory/recall"
VOLATILE = ("id", "created_at", "updated_at", "content_hash")


def post(s: Any, headers: dict[str, str], path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{s.url}{path}", json=body, headers=headers, timeout=30)


def stable(reply: dict[str, Any]) -> dict[str, Any]:
    """A remember answer without what differs between any two writes (ids, clocks)."""
    memory = {k: v for k, v in reply["memory"].items() if k not in VOLATILE}
    return {"deduped": reply["deduped"], "embedded": reply["embedded"], "memory": memory}


# --- 1. dedup is per scope --------------------------------------------------------------------


def test_remembering_another_scopes_text_makes_a_fresh_memory_of_ones_own(serve) -> None:
    s = serve()
    a, b = auth(issue(s.app, "agent", agent="a")), auth(issue(s.app, "agent", agent="b"))
    text = "the vault code is 4242"
    theirs = post(s, b, REMEMBER, {"content": text, "tags": ["bank"], "who": "bob"}).json()
    mine = post(s, a, REMEMBER, {"content": text}).json()
    assert mine["id"] != theirs["id"] and mine["deduped"] is False
    assert mine["memory"]["agent_id"] == "a" and mine["memory"]["tags"] == []
    # Exactly the answer of a daemon where b never wrote it.
    fresh = serve()
    alone = post(fresh, auth(issue(fresh.app, "agent", agent="a")), REMEMBER,
                 {"content": text}).json()
    assert stable(mine) == stable(alone)
    # b's memory and its history are untouched by a's guess.
    history = s.client.get(f"/api/memory/{theirs['id']}/history").json()["history"]
    assert [h["event"] for h in history] == ["created"]
    # Within its own scope, a still dedups.
    again = post(s, a, REMEMBER, {"content": text}).json()
    assert again["deduped"] is True and again["id"] == mine["id"]


def test_dedup_separates_projects_of_one_agent(serve) -> None:
    s = serve()
    p = auth(issue(s.app, "agent", project="p"))
    q = auth(issue(s.app, "agent", project="q"))
    first = post(s, p, REMEMBER, {"content": "deploy with blue green"}).json()
    second = post(s, q, REMEMBER, {"content": "deploy with blue green"}).json()
    assert second["id"] != first["id"] and not second["deduped"]
    assert second["memory"]["project"] == "q"


def test_changing_content_to_another_scopes_text_is_not_a_conflict(serve) -> None:
    s = serve()
    a, b = auth(issue(s.app, "agent", agent="a")), auth(issue(s.app, "agent", agent="b"))
    post(s, b, REMEMBER, {"content": "b's private plan"})
    mine = post(s, a, REMEMBER, {"content": "draft"}).json()
    patched = httpx.patch(f"{s.url}/api/memory/{mine['id']}", headers=a,
                          json={"content": "b's private plan"})
    assert patched.status_code == 200, patched.text
    assert patched.json()["content"] == "b's private plan"


# --- 2. idempotency keys: structured namespace, replay only of what one sent ------------------


def test_idempotency_keys_of_look_alike_scopes_do_not_collide(serve) -> None:
    s = serve()
    one = auth(issue(s.app, "agent", agent="acme", project="web/prod"))
    two = auth(issue(s.app, "agent", agent="acme/web", project="prod"))
    first = post(s, one, REMEMBER, {"content": "acme's note", "idempotency_key": "k1"}).json()
    second = post(s, two, REMEMBER, {"content": "acme/web's note", "idempotency_key": "k1"}).json()
    assert second["id"] != first["id"]
    assert second["memory"]["content"] == "acme/web's note"


def test_an_unscoped_key_spelling_a_scoped_namespace_replays_nothing(serve) -> None:
    s = serve()
    bob = auth(issue(s.app, "agent", agent="bob", project="pb"))
    secret = post(s, bob, REMEMBER, {"content": "bob's diary", "idempotency_key": "k1"}).json()
    writer = auth(issue(s.app, "agent", permissions=["remember"]))
    for key in ("bob/pb/k1", "k1"):
        reply = post(s, writer, REMEMBER, {"content": f"guess {key}", "idempotency_key": key})
        assert reply.status_code == 200, reply.text
        assert reply.json()["id"] != secret["id"]
        assert reply.json()["memory"]["content"] == f"guess {key}"


def test_a_reused_key_with_other_content_is_refused_without_revealing_the_first(serve) -> None:
    s = serve()
    token = auth(issue(s.app, "agent", agent="a"))
    first = post(s, token, REMEMBER, {"content": "first text", "idempotency_key": "k"}).json()
    retry = post(s, token, REMEMBER, {"content": "first text", "idempotency_key": "k"}).json()
    assert retry == first
    other = post(s, token, REMEMBER, {"content": "other text", "idempotency_key": "k"})
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"
    assert "first text" not in other.text
    assert s.app.list().total == 1


# --- 3. the whole-source channel stays inside the project -------------------------------------


def test_a_source_shared_by_two_projects_is_ranked_per_project(serve) -> None:
    s = serve()
    p = auth(issue(s.app, "agent", project="p"))
    q = auth(issue(s.app, "agent", project="q"))
    for i, text in enumerate(("we talked about the garden", "then about the kitchen")):
        post(s, p, REMEMBER, {"content": text, "source_id": "chat-1", "event_at": f"2026-01-0{i + 1}"})
    for text in ("the zebra escaped", "the zebra came back"):
        post(s, q, REMEMBER, {"content": text, "source_id": "chat-1"})
    # A daemon where project q never wrote: p's recall for q's word must be the same.
    alone = serve()
    p_alone = auth(issue(alone.app, "agent", project="p"))
    for i, text in enumerate(("we talked about the garden", "then about the kitchen")):
        post(alone, p_alone, REMEMBER,
             {"content": text, "source_id": "chat-1", "event_at": f"2026-01-0{i + 1}"})
    found = post(s, p, RECALL, {"query": "zebra", "mode": "keyword", "limit": 20}).json()
    assert found["results"] == []
    for mode in ("hybrid", "full"):
        body = {"query": "zebra", "mode": mode, "limit": 20}
        assert seen(post(s, p, RECALL, body).json()) == seen(post(alone, p_alone, RECALL, body).json())
    hits = post(s, p, RECALL, {"query": "garden kitchen", "mode": "full"}).json()["results"]
    assert hits and all(h["project"] == "p" for h in hits)


def seen(answer: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a caller sees of a recall answer, without ids: content, score, evidence, order."""
    return [(h["content"], h["score"], sorted(h["evidence"].items()), h["adjustments"])
            for h in answer["results"]]
