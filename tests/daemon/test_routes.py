"""Every HTTP route of the daemon, over real HTTP, with its error cases.

The server is real (uvicorn on a free loopback port, see conftest.serve) and so is the database;
the hash embedder stands in for the model. A bad request must get a 4xx with the contract's
`{"error", "code"}` body and must change nothing: the tests count memories after each one.
"""

from __future__ import annotations

import json
import logging
import statistics
import threading
import time
from typing import Any

import httpx
import pytest

import signet
from signet.config import MemoryConfig, PipelineConfig
from signet.daemon.schemas import HistoryOut, MemoryOut, PageOut, RecallOut, RememberOut

REMEMBER = "/api/memory/remember"


def remember(client: httpx.Client, content: str, **fields: Any) -> dict[str, Any]:
    reply = client.post(REMEMBER, json={"content": content, **fields})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def total(client: httpx.Client, include_deleted: bool = True) -> int:
    reply = client.get("/api/memories", params={"include_deleted": include_deleted})
    assert reply.status_code == 200, reply.text
    return int(reply.json()["total"])


def assert_error(reply: httpx.Response, status: int, code: str, *words: str) -> None:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error", "code"}, body
    assert body["code"] == code, body
    for word in words:
        assert word in body["error"], body


# --- health, status, OpenAPI ------------------------------------------------------------------


def test_health_answers_ok_with_version_and_pid(serve) -> None:
    reply = serve().client.get("/health")
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok"
    assert body["version"] == signet.__version__
    assert isinstance(body["pid"], int)


def test_keep_alive_requests_do_not_wait_for_delayed_acks(serve) -> None:
    """Without TCP_NODELAY on the daemon's connections, each answer on a kept-alive connection
    waits ~40 ms for the client's delayed ACK; with it, /health takes about a millisecond."""
    client = serve().client
    timings = []
    for _ in range(31):
        started = time.perf_counter()
        assert client.get("/health").status_code == 200
        timings.append(time.perf_counter() - started)
    assert statistics.median(timings) < 0.02, timings


def test_status_adds_the_daemon_to_the_app_status(serve) -> None:
    s = serve()
    remember(s.client, "the status counts this memory")
    body = s.client.get("/api/status").json()
    assert body["memories"] == 1
    assert body["database"] == s.database
    daemon = body["daemon"]
    assert daemon["port"] == s.cfg.port and daemon["uptime_s"] >= 0
    assert daemon["started_at"].endswith("Z")


def test_openapi_documents_every_route_and_its_bodies(serve) -> None:
    spec = serve().client.get("/openapi.json").json()
    routes = {(path, method) for path, item in spec["paths"].items() for method in item}
    assert routes >= {
        ("/health", "get"), ("/api/status", "get"), ("/api/memory/remember", "post"),
        ("/api/memory/recall", "post"), ("/api/memory/search", "get"), ("/api/memories", "get"),
        ("/api/memory/{memory_id}", "get"), ("/api/memory/{memory_id}", "patch"),
        ("/api/memory/{memory_id}", "delete"), ("/api/memory/{memory_id}/history", "get"),
        ("/api/memory/{memory_id}/recover", "post"),
    }
    schemas = spec["components"]["schemas"]
    assert {"RememberBody", "RecallBody", "PatchBody", "Memory", "ErrorOut"} <= set(schemas)
    assert "content" in schemas["Memory"]["properties"]
    remember_op = spec["paths"]["/api/memory/remember"]["post"]
    assert "400" in remember_op["responses"] and "413" in remember_op["responses"]


# --- remember ---------------------------------------------------------------------------------


def test_remember_stores_the_memory_and_returns_it(serve, backend) -> None:
    client = serve().client
    body = remember(
        client, "Alice prefers green tea", type="preference", tags=["drinks", "alice"],
        importance=0.8, who="alice", project="kitchen", pinned=True,
        event_at="2026-01-02T03:04:05Z", source_id="s1", source_type="chat",
    )
    RememberOut.model_validate(body)
    assert body["deduped"] is False and body["embedded"] is True
    memory = body["memory"]
    assert memory["id"] == body["id"]
    assert memory["content"] == "Alice prefers green tea"
    assert (memory["type"], memory["tags"], memory["importance"]) == (
        "preference", ["drinks", "alice"], 0.8
    )
    assert (memory["who"], memory["project"], memory["pinned"]) == ("alice", "kitchen", True)
    assert client.get(f"/api/memory/{body['id']}").json() == memory


def test_remember_accepts_tags_as_one_comma_separated_string(serve, backend) -> None:
    body = remember(serve().client, "tags from a shell", tags="a, b,,c")
    assert body["memory"]["tags"] == ["a", "b", "c"]


def test_remembering_the_same_content_again_is_a_dedup_hit(serve, backend) -> None:
    client = serve().client
    first = remember(client, "The deploy runs at noon")
    second = remember(client, "the  deploy runs at noon")
    assert second["deduped"] is True and second["id"] == first["id"]
    assert total(client) == 1


def test_a_repeated_idempotency_key_returns_the_first_response_without_writing(serve, backend) -> None:
    client = serve().client
    first = client.post(REMEMBER, json={"content": "first write", "idempotency_key": "k-1"})
    again = client.post(REMEMBER, json={"content": "first write", "idempotency_key": "k-1"})
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    reused = client.post(REMEMBER, json={"content": "a different text", "idempotency_key": "k-1"})
    assert reused.status_code == 409 and reused.json()["code"] == "idempotency_key_reused"
    assert total(client) == 1
    history = client.get(f"/api/memory/{first.json()['id']}/history").json()["history"]
    assert [e["event"] for e in history] == ["created"]
    other = remember(client, "a different text", idempotency_key="k-2")
    assert other["id"] != first.json()["id"] and total(client) == 2


def test_racing_requests_with_one_idempotency_key_write_once(serve, backend) -> None:
    s = serve()
    barrier = threading.Barrier(8)
    replies: list[dict[str, Any]] = []

    def send(n: int) -> None:
        with httpx.Client(base_url=s.url, timeout=30, headers=s.client.headers) as client:
            barrier.wait()
            reply = client.post(REMEMBER, json={"content": "racer", "idempotency_key": "race"})
            replies.append(reply.json())

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(replies) == 8 and all(r == replies[0] for r in replies)
    assert total(s.client) == 1
    # Replayed, not deduped: the memory's history holds its creation only.
    history = s.client.get(f"/api/memory/{replies[0]['id']}/history").json()["history"]
    assert [e["event"] for e in history] == ["created"]


def test_headers_name_the_actor_session_and_request_in_history(serve, backend) -> None:
    client = serve().client
    reply = client.post(
        REMEMBER, json={"content": "who wrote this"},
        headers={"X-Signet-Actor": "claude-code", "X-Signet-Session": "sess-9",
                 "X-Request-Id": "req-42"},
    )
    assert reply.headers["x-request-id"] == "req-42"
    event = client.get(f"/api/memory/{reply.json()['id']}/history").json()["history"][0]
    assert (event["changed_by"], event["session_id"], event["request_id"]) == (
        "claude-code", "sess-9", "req-42"
    )
    assert reply.json()["memory"]["session_id"] == "sess-9"


def test_a_request_without_an_id_gets_one(serve) -> None:
    reply = serve().client.get("/health")
    assert len(reply.headers["x-request-id"]) >= 8


BAD_REMEMBER_BODIES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("empty content", {"content": ""}, ("empty",)),
    ("whitespace content", {"content": " \n\t "}, ("empty",)),
    ("content over the maximum", {"content": "x" * 101}, ("maximum", "100")),
    ("unknown type", {"content": "x", "type": "gossip"}, ("type",)),
    ("content not a string", {"content": 5}, ("content",)),
    ("content missing", {"type": "fact"}, ("content", "required")),
    ("content null", {"content": None}, ("content",)),
    ("content with a lone surrogate", {"content": "a\ud800b"}, ("content", "Unicode")),
    ("a tag with a lone surrogate", {"content": "x", "tags": ["\udfff"]}, ("tags", "Unicode")),
    # PostgreSQL text cannot hold a NUL: refused on both backends alike, naming the field.
    ("content with a NUL", {"content": "a\x00b"}, ("content", "NUL")),
    ("a project with a NUL", {"content": "x", "project": "p\x00"}, ("project", "NUL")),
    ("tags not strings", {"content": "x", "tags": [1, 2]}, ("tags",)),
    ("tags an object", {"content": "x", "tags": {"a": 1}}, ("tags",)),
    ("importance a word", {"content": "x", "importance": "high"}, ("importance",)),
    ("importance above 1", {"content": "x", "importance": 2}, ("importance",)),
    ("confidence negative", {"content": "x", "confidence": -0.1}, ("confidence",)),
    ("pinned a word", {"content": "x", "pinned": "perhaps"}, ("pinned",)),
    ("event_at not a date", {"content": "x", "event_at": "last tuesday"}, ("event_at",)),
    ("empty idempotency key", {"content": "x", "idempotency_key": ""}, ("idempotency_key",)),
    ("body an array", ["content"], ("JSON object",)),
    ("body a string", "content", ("JSON object",)),
    ("body null", None, ("JSON",)),
]


@pytest.mark.parametrize(("case", "body", "words"), BAD_REMEMBER_BODIES,
                         ids=[c[0] for c in BAD_REMEMBER_BODIES])
def test_bad_remember_input_is_a_400_that_writes_nothing(serve, backend, case, body, words) -> None:
    client = serve(memory=MemoryConfig(max_content_chars=100)).client
    reply = client.post(REMEMBER, content=json.dumps(body),
                        headers={"content-type": "application/json"})
    assert_error(reply, 400, "invalid_input", *words)
    assert total(client) == 0


@pytest.mark.parametrize("raw", [b"{not json", b'{"content": "x",}', b"", b"\xff\xfe"])
def test_a_malformed_json_body_is_a_400_that_writes_nothing(serve, backend, raw) -> None:
    client = serve().client
    reply = client.post(REMEMBER, content=raw, headers={"content-type": "application/json"})
    assert_error(reply, 400, "invalid_input", "JSON")
    assert total(client) == 0


def test_a_form_encoded_body_is_told_to_send_json(serve) -> None:
    client = serve().client
    reply = client.post(REMEMBER, data={"content": "from curl -d"})
    assert_error(reply, 400, "invalid_input", "application/json")
    assert total(client) == 0


def test_a_body_over_one_mib_is_413_and_writes_nothing(serve, backend) -> None:
    client = serve().client
    big = json.dumps({"content": "x" * (1024 * 1024 + 10)}).encode()
    reply = client.post(REMEMBER, content=big, headers={"content-type": "application/json"})
    assert_error(reply, 413, "payload_too_large")

    def chunks():  # no Content-Length: the limit must hold while streaming too
        for start in range(0, len(big), 65536):
            yield big[start:start + 65536]

    reply = client.post(REMEMBER, content=chunks(), headers={"content-type": "application/json"})
    assert_error(reply, 413, "payload_too_large")
    assert total(client) == 0


def test_a_body_just_under_the_limit_is_accepted(serve) -> None:
    client = serve(memory=MemoryConfig(max_content_chars=2_000_000)).client
    content = "y" * (1024 * 1024 - 100)
    reply = client.post(REMEMBER, json={"content": content})
    assert reply.status_code == 200, reply.text[:200]


def test_remember_while_mutations_are_frozen_is_503(serve, backend) -> None:
    client = serve(pipeline=PipelineConfig(mutations_frozen=True)).client
    assert_error(client.post(REMEMBER, json={"content": "x"}), 503, "mutations_frozen")


# --- recall and search ------------------------------------------------------------------------


def test_recall_returns_hits_with_evidence_and_timings(serve, backend) -> None:
    client = serve().client
    wanted = remember(client, "The database backup runs every night at two")["id"]
    remember(client, "Bob likes mountain biking on weekends")
    reply = client.post("/api/memory/recall", json={"query": "database backup", "limit": 5})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    RecallOut.model_validate(body)
    assert body["results"][0]["id"] == wanted
    assert body["results"][0]["evidence"]["lexical"] is not None
    assert body["query"] == "database backup" and body["meta"]["count"] == len(body["results"])
    assert "total" in body["meta"]["timings"]


def test_recall_filters_by_project_and_tags(serve, backend) -> None:
    client = serve().client
    remember(client, "deploy notes for alpha", project="alpha", tags=["ops"])
    beta = remember(client, "deploy notes for beta", project="beta", tags=["ops"])["id"]
    body = client.post("/api/memory/recall", json={
        "query": "deploy notes", "filters": {"project": "beta", "tags": ["ops"]}, "mode": "keyword",
    }).json()
    assert [r["id"] for r in body["results"]] == [beta]


def test_search_is_recall_through_query_parameters(serve, backend) -> None:
    client = serve().client
    remember(client, "search finds the kettle", project="home", tags=["a", "b"])
    remember(client, "search finds the toaster", project="work")
    params = {"q": "search finds", "project": "home", "tags": "a,b", "mode": "keyword"}
    via_get = client.get("/api/memory/search", params=params).json()
    via_post = client.post("/api/memory/recall", json={
        "query": "search finds", "mode": "keyword",
        "filters": {"project": "home", "tags": ["a", "b"]},
    }).json()
    assert [r["id"] for r in via_get["results"]] == [r["id"] for r in via_post["results"]]
    assert len(via_get["results"]) == 1


BAD_RECALLS: list[tuple[str, Any, tuple[str, ...]]] = [
    ("query missing", {"limit": 3}, ("query",)),
    ("query a number", {"query": 3}, ("query",)),
    ("unknown mode", {"query": "x", "mode": "psychic"}, ("mode",)),
    ("limit zero", {"query": "x", "limit": 0}, ("limit",)),
    ("limit too big", {"query": "x", "limit": 100000}, ("limit",)),
    ("limit a word", {"query": "x", "limit": "ten"}, ("limit",)),
    ("filters a list", {"query": "x", "filters": ["a"]}, ("filters",)),
    ("since not a date", {"query": "x", "filters": {"since": "soon"}}, ("since",)),
    ("pinned a word", {"query": "x", "filters": {"pinned": "maybe"}}, ("filters.pinned",)),
]


@pytest.mark.parametrize(("case", "body", "words"), BAD_RECALLS, ids=[c[0] for c in BAD_RECALLS])
def test_bad_recall_input_is_a_400(serve, backend, case, body, words) -> None:
    reply = serve().client.post("/api/memory/recall", json=body)
    assert_error(reply, 400, "invalid_input", *words)


@pytest.mark.parametrize(("params", "word"), [
    ({}, "q"), ({"q": "x", "limit": "many"}, "limit"), ({"q": "x", "mode": "nope"}, "mode"),
    ({"q": "x", "pinned": "sometimes"}, "pinned"), ({"q": "x", "until": "later"}, "until"),
])
def test_bad_search_parameters_are_a_400(serve, params, word) -> None:
    reply = serve().client.get("/api/memory/search", params=params)
    assert_error(reply, 400, "invalid_input", word)


# --- list -------------------------------------------------------------------------------------


def test_list_pages_newest_first_and_filters(serve, backend) -> None:
    client = serve().client
    ids = [remember(client, f"memory number {i}", project="p" if i % 2 else "q",
                    tags=["odd"] if i % 2 else [])["id"] for i in range(5)]
    page = client.get("/api/memories", params={"limit": 2, "offset": 1}).json()
    PageOut.model_validate(page)
    assert (page["total"], page["limit"], page["offset"]) == (5, 2, 1)
    assert [m["id"] for m in page["items"]] == [ids[3], ids[2]]
    only_p = client.get("/api/memories", params={"project": "p"}).json()
    assert {m["id"] for m in only_p["items"]} == {ids[1], ids[3]}
    tagged = client.get("/api/memories", params={"tags": "odd"}).json()
    assert tagged["total"] == 2


def test_list_shows_deleted_memories_only_when_asked(serve, backend) -> None:
    client = serve().client
    gone = remember(client, "soon forgotten")["id"]
    client.delete(f"/api/memory/{gone}")
    assert client.get("/api/memories").json()["total"] == 0
    listed = client.get("/api/memories", params={"include_deleted": "true"}).json()
    assert [m["id"] for m in listed["items"]] == [gone]


@pytest.mark.parametrize(("params", "word"), [
    ({"limit": 0}, "limit"), ({"limit": 5000}, "limit"), ({"offset": -1}, "offset"),
    ({"limit": "lots"}, "limit"), ({"pinned": "maybe"}, "pinned"),
    ({"include_deleted": "2"}, "include_deleted"), ({"since": "yesterday"}, "since"),
    ({"offset": 10**30}, "less than or equal to"),
])
def test_bad_list_parameters_are_a_400(serve, params, word) -> None:
    reply = serve().client.get("/api/memories", params=params)
    assert_error(reply, 400, "invalid_input", word)


# --- get, modify, forget, history, recover ----------------------------------------------------


def test_get_of_an_unknown_id_is_404(serve, backend) -> None:
    assert_error(serve().client.get("/api/memory/no-such-id"), 404, "not_found", "no-such-id")


def test_patch_changes_only_the_fields_sent_and_bumps_the_version(serve, backend) -> None:
    client = serve().client
    created = remember(client, "the office moves in May", who="hr", project="office")["memory"]
    reply = client.patch(f"/api/memory/{created['id']}", json={
        "content": "the office moves in June", "tags": ["move"], "who": None,
        "version": created["version"], "reason": "date changed",
    })
    assert reply.status_code == 200, reply.text
    updated = reply.json()
    MemoryOut.model_validate(updated)
    assert updated["content"] == "the office moves in June"
    assert (updated["tags"], updated["who"], updated["project"]) == (["move"], None, "office")
    assert updated["version"] == created["version"] + 1
    event = client.get(f"/api/memory/{created['id']}/history").json()["history"][-1]
    assert (event["event"], event["reason"]) == ("updated", "date changed")
    assert event["old_content"] == "the office moves in May"


def test_patch_with_a_stale_version_is_409_and_changes_nothing(serve, backend) -> None:
    client = serve().client
    created = remember(client, "version check")["memory"]
    client.patch(f"/api/memory/{created['id']}", json={"importance": 0.9})
    reply = client.patch(f"/api/memory/{created['id']}",
                         json={"content": "lost update", "version": created["version"]})
    assert_error(reply, 409, "conflict", "version")
    assert client.get(f"/api/memory/{created['id']}").json()["content"] == "version check"


BAD_PATCHES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("no changes", {}, ("no changes",)),
    ("only a reason", {"reason": "because"}, ("no changes",)),
    ("content null", {"content": None}, ("content", "null")),
    ("content empty", {"content": "  "}, ("empty",)),
    ("content a list", {"content": ["a"]}, ("content",)),
    ("importance too high", {"importance": 7}, ("importance",)),
    ("type unknown", {"type": "rumour"}, ("type",)),
    ("tags numbers", {"tags": [1]}, ("tags",)),
    ("version a word", {"content": "x", "version": "latest"}, ("version",)),
    ("body an array", [1, 2], ("JSON object",)),
]


@pytest.mark.parametrize(("case", "body", "words"), BAD_PATCHES, ids=[c[0] for c in BAD_PATCHES])
def test_bad_patch_input_is_a_400_that_changes_nothing(serve, backend, case, body, words) -> None:
    client = serve().client
    created = remember(client, "patch target")["memory"]
    reply = client.patch(f"/api/memory/{created['id']}", content=json.dumps(body),
                         headers={"content-type": "application/json"})
    assert_error(reply, 400, "invalid_input", *words)
    assert client.get(f"/api/memory/{created['id']}").json() == created


def test_patch_of_an_unknown_or_deleted_memory_fails(serve, backend) -> None:
    client = serve().client
    assert_error(client.patch("/api/memory/nope", json={"content": "x"}), 404, "not_found")
    gone = remember(client, "deleted before the patch")["id"]
    client.delete(f"/api/memory/{gone}")
    assert_error(client.patch(f"/api/memory/{gone}", json={"content": "x"}), 409, "conflict")


def test_delete_soft_deletes_and_records_the_reason(serve, backend) -> None:
    client = serve().client
    target = remember(client, "to be forgotten")["id"]
    reply = client.delete(f"/api/memory/{target}", params={"reason": "obsolete"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["is_deleted"] is True and reply.json()["deleted_at"]
    event = client.get(f"/api/memory/{target}/history",
                       params={"include_deleted": "true"}).json()["history"][-1]
    assert (event["event"], event["reason"]) == ("deleted", "obsolete")


def test_deleting_a_pinned_memory_needs_force(serve, backend) -> None:
    client = serve().client
    pinned = remember(client, "critical: never forget the root password rotation")["id"]
    assert_error(client.delete(f"/api/memory/{pinned}"), 409, "conflict", "pinned")
    assert client.get(f"/api/memory/{pinned}").json()["is_deleted"] is False
    reply = client.delete(f"/api/memory/{pinned}", params={"force": "true"})
    assert reply.status_code == 200 and reply.json()["is_deleted"] is True


def test_delete_errors(serve, backend) -> None:
    client = serve().client
    assert_error(client.delete("/api/memory/nope"), 404, "not_found")
    target = remember(client, "force must be a boolean")["id"]
    assert_error(client.delete(f"/api/memory/{target}", params={"force": "definitely"}),
                 400, "invalid_input", "force")


def test_history_lists_every_event_in_order(serve, backend) -> None:
    client = serve().client
    target = remember(client, "a memory with a past")["id"]
    client.patch(f"/api/memory/{target}", json={"importance": 0.2})
    client.delete(f"/api/memory/{target}")
    client.post(f"/api/memory/{target}/recover", json={"reason": "oops"})
    body = client.get(f"/api/memory/{target}/history").json()
    HistoryOut.model_validate(body)
    assert [e["event"] for e in body["history"]] == ["created", "updated", "deleted", "recovered"]
    assert body["history"][-1]["reason"] == "oops"
    assert_error(client.get("/api/memory/nope/history"), 404, "not_found")


def test_recover_brings_a_deleted_memory_back(serve, backend) -> None:
    client = serve().client
    target = remember(client, "recover me")["id"]
    client.delete(f"/api/memory/{target}")
    reply = client.post(f"/api/memory/{target}/recover")  # the body is optional
    assert reply.status_code == 200, reply.text
    assert reply.json()["is_deleted"] is False
    assert client.get("/api/memories").json()["total"] == 1


def test_recover_errors(serve, backend) -> None:
    client = serve().client
    live = remember(client, "never deleted")["id"]
    assert_error(client.post(f"/api/memory/{live}/recover"), 409, "conflict", "not deleted")
    assert_error(client.post("/api/memory/nope/recover"), 404, "not_found")
    assert_error(client.post(f"/api/memory/{live}/recover", json={"reason": 5}),
                 400, "invalid_input", "reason")


# --- the edges: routing, storage failures, bugs -----------------------------------------------


def test_unknown_routes_and_methods_get_json_errors(serve) -> None:
    client = serve().client
    assert_error(client.get("/api/nothing-here"), 404, "not_found", "/api/nothing-here")
    assert_error(client.put("/api/memory/some-id", json={}), 405, "method_not_allowed")


def test_a_database_closed_under_the_daemon_is_503_not_500(serve) -> None:
    s = serve()
    target = remember(s.client, "written before the store went away")["id"]
    # The store itself goes away: the SQLite file's connections, or the PostgreSQL pool.
    s.app.backend.close()
    assert_error(s.client.post(REMEMBER, json={"content": "after"}), 503, "store_error")
    assert_error(s.client.get(f"/api/memory/{target}"), 503, "store_error")


def test_an_unexpected_error_is_a_logged_500_without_details(serve, caplog) -> None:
    s = serve()

    @s.api.get("/test-only/boom")
    def boom() -> None:
        raise RuntimeError("secret internals")

    with caplog.at_level(logging.ERROR, logger="signet.daemon.access"):
        reply = s.client.get("/test-only/boom")
    assert_error(reply, 500, "internal")
    assert "secret" not in reply.text
    record = next(r for r in caplog.records if r.getMessage() == "unhandled error")
    assert record.exc_info is not None and record.__dict__["path"] == "/test-only/boom"


WEIRD_VALUES: list[Any] = [
    None, True, 0, -1, 1e308, -1e308, float("nan"), float("inf"), 10**30, "", " ", "\x00", "\ud800", "x" * 5000, "é🙂", [], [None],
    {}, {"a": {"b": []}}, "2026-13-45", "../../etc/passwd", "' OR 1=1 --", "NEAR(a b)", '"',
]


def test_no_value_in_any_field_makes_a_5xx(serve) -> None:
    """A sweep of odd values through every field of every body, and through the path and query:
    each may be refused, none may break the server."""
    client = serve().client
    target = remember(client, "sweep target")["id"]
    routes = [
        ("post", REMEMBER, ["content", "type", "category", "tags", "importance", "confidence",
                            "pinned", "who", "why", "project", "source_id", "source_type",
                            "event_at", "idempotency_key"], {"content": "ok"}),
        ("post", "/api/memory/recall", ["query", "limit", "mode", "filters", "min_score",
                                        "expand"], {"query": "sweep"}),
        ("patch", f"/api/memory/{target}", ["content", "type", "tags", "importance", "pinned",
                                            "category", "who", "why", "project", "version",
                                            "reason"], {}),
        ("post", f"/api/memory/{target}/recover", ["reason"], {}),
    ]
    failures = []
    for method, path, fields, base in routes:
        for field in fields:
            for value in WEIRD_VALUES:
                body = json.dumps({**base, field: value})
                reply = client.request(method, path, content=body,
                                       headers={"content-type": "application/json"})
                if reply.status_code >= 500:
                    failures.append((method, path, field, repr(value)[:30], reply.text[:100]))
    for value in WEIRD_VALUES:
        if not isinstance(value, str) or not value or value in ("\x00", "\ud800"):
            continue  # a URL cannot carry these
        for params in ({"q": value}, {"q": "x", "type": value, "since": value, "tags": value}):
            reply = client.get("/api/memory/search", params=params)
            if reply.status_code >= 500:
                failures.append(("get", "search", str(params)[:40], reply.text[:100]))
        reply = client.get("/api/memories", params={"who": value, "until": value})
        if reply.status_code >= 500:
            failures.append(("get", "memories", repr(value)[:30], reply.text[:100]))
    assert not failures, failures


def test_feedback_by_short_id_is_recorded_and_positive_feedback_counts_an_access(
    serve, backend
) -> None:
    client = serve().client
    memory_id = remember(client, "the staging cluster is for demos")["id"]
    short = memory_id[:8]
    assert client.get(f"/api/memory/{short}").json()["id"] == memory_id  # a short id reads
    given = client.post("/api/memory/feedback", json={
        "memory_id": short, "feedback": "positive", "session_id": "s-1"})
    assert given.status_code == 200, given.text
    assert (given.json()["memory_id"], given.json()["feedback_type"]) == (memory_id, "positive")
    listed = client.get("/api/memories").json()["items"]
    assert next(m for m in listed if m["id"] == memory_id)["access_count"] >= 1
    bare = client.post("/api/memory/feedback", json={"memory_id": memory_id,
                                                     "feedback": "correction"})
    assert bare.status_code == 400 and "correction_text" in bare.text
    unknown = client.post("/api/memory/feedback", json={"memory_id": "f" * 32,
                                                        "feedback": "negative"})
    assert unknown.status_code == 404


NUL_REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/api/memories", {"params": {"who": "\x00"}}),
    ("GET", "/api/memories", {"params": {"project": "a\x00"}}),
    ("GET", "/api/memory/search", {"params": {"q": "a\x00b"}}),
    ("GET", "/api/memory/a%00b", {}),
    ("DELETE", "/api/memory/a%00b", {}),
    ("GET", "/api/sessions/a%00b", {}),
    ("GET", "/api/knowledge/entities/a%00b", {}),
    ("GET", "/api/documents/a%00b", {}),
    ("GET", "/api/lineage/a%00b", {}),
    ("GET", "/api/threads/a%00b", {}),
    ("GET", "/api/pipeline/jobs/a%00b", {}),
]


def test_a_nul_in_a_query_or_a_path_is_refused_never_a_5xx(serve, backend) -> None:
    """PostgreSQL text cannot hold a NUL: a query parameter holding one is refused by name (the
    same 400 on both backends), an id holding one names nothing (404 on SQLite, 400 on
    PostgreSQL, whose driver refuses the value)."""
    client = serve().client
    remember(client, "one memory")
    for method, url, kwargs in NUL_REQUESTS:
        reply = client.request(method, url, **kwargs)
        assert reply.status_code in (400, 404), (method, url, reply.text)
        if "params" in kwargs:
            assert_error(reply, 400, "invalid_input", "NUL")
