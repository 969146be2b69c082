"""The operational routes over real HTTP: pipeline status and controls, batch forget and
modify, the review queue, repair, embeddings, telemetry, the recall QA ledger, config and
identity files; and docs/api.md, which must list every route the daemon serves.

Servers are real (conftest.serve: uvicorn on a loopback port, a real database, the hash
embedder) and every call carries a token; permission cases use tokens of narrower roles.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
from fastapi.routing import APIRoute

from auth_tokens import auth, issue
from signet.app import SignetApp
from signet.config import PipelineConfig, PipelineTelemetryConfig
from signet.daemon.auth import PERMISSION_ATTR
from signet.daemon.background import BackgroundWorkers
from signet.store.backend import CoreStore
from signet.types import utc_now

REMEMBER = "/api/memory/remember"
API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def remember(client: httpx.Client, content: str, **fields) -> str:
    reply = client.post(REMEMBER, json={"content": content, **fields})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["id"])


def ok(reply: httpx.Response) -> dict:
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


# --- pipeline --------------------------------------------------------------------------------


def jobs_of(app: SignetApp) -> CoreStore:
    """The app's job queue as the workers use it, on either backend."""
    return app.backend.core


def extract_job(app: SignetApp, memory_id: str) -> CoreStore:
    """An extract job for the memory (the SQLite pipeline queued one already; the PostgreSQL
    backend runs no extraction, so the test queues it as the pipeline would)."""
    queue = jobs_of(app)
    queue.enqueue("extract", now=utc_now(), memory_id=memory_id)
    return queue


def test_pipeline_status_reports_queue_depths_workers_and_last_errors(serve, backend) -> None:
    s = serve()
    memory_id = remember(s.client, "Alice moved to Paris")
    queue = extract_job(s.app, memory_id)
    job = queue.lease(utc_now(), job_types=["extract"])
    assert job is not None
    queue.fail(job.id, "BadResponse (bad_response): not JSON", utc_now())
    body = ok(s.client.get("/api/pipeline/status"))
    assert body["queue"]["extract"] == {"pending": 1}
    assert body["last_errors"][0]["memory_id"] == memory_id
    assert "not JSON" in body["last_errors"][0]["error"]
    assert body["workers"]["running"] is False  # a bare create_app runs no workers
    assert s.client.post("/api/pipeline/pause").json()["code"] == "no_workers"


def test_pause_resume_and_nudge_drive_the_background_workers(serve, backend: str) -> None:
    s = serve(pipeline=PipelineConfig(worker_poll_ms=60_000))  # idle sleep: a minute
    workers = BackgroundWorkers(s.app)
    s.api.state.workers = workers
    workers.start()
    try:
        pipeline = ok(s.client.get("/api/status"))["pipeline"]
        assert pipeline == {"enabled": True, "mutationsFrozen": False, "extraction": "entities"}
        assert ok(s.client.post("/api/pipeline/pause"))["paused"] is True
        memory_id = remember(s.client, "Bob works at Acme in Berlin")
        time.sleep(0.3)
        assert s.app.get(memory_id).extraction_status == "pending"  # paused: nothing ran
        assert ok(s.client.post("/api/pipeline/resume"))["paused"] is False
        assert wait_for(lambda: s.app.get(memory_id).extraction_status == "completed")
        # Now idle for a minute; a nudge makes a new job run at once.
        second = remember(s.client, "Carol lives in Lisbon")
        time.sleep(0.2)
        status = ok(s.client.post("/api/pipeline/nudge"))
        assert status["running"] is True and "extract" in status["workers"]
        assert wait_for(lambda: s.app.get(second).extraction_status == "completed", 5)
    finally:
        workers.stop()


def wait_for(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


# --- batch memory operations and the review queue ----------------------------------------------


def test_batch_forget_previews_then_executes_with_the_token(serve, backend) -> None:
    s = serve()
    ids = [remember(s.client, f"the old server {n} is retired") for n in range(3)]
    keep = remember(s.client, "the new server is fine")
    preview = ok(s.client.post("/api/memory/forget", json={"query": "old server retired"}))
    assert preview["count"] == 3 and preview["confirm_token"]
    assert ok(s.client.get(f"/api/memory/{ids[0]}"))["is_deleted"] is False

    missing_token = s.client.post("/api/memory/forget",
                                  json={"query": "old server retired", "mode": "execute"})
    assert missing_token.status_code == 400
    done = ok(s.client.post("/api/memory/forget", json={
        "query": "old server retired", "mode": "execute",
        "confirm_token": preview["confirm_token"], "reason": "decommissioned",
    }))
    assert done["succeeded"] == 3
    assert all(ok(s.client.get(f"/api/memory/{i}", params={"include_deleted": "true"}))["is_deleted"]
               for i in ids)
    assert ok(s.client.get(f"/api/memory/{keep}"))["is_deleted"] is False
    too_many = s.client.post("/api/memory/forget", json={"ids": [str(n) for n in range(201)]})
    assert too_many.status_code == 400 and too_many.json()["code"] == "invalid_input"


def test_batch_forget_refuses_a_filter_it_does_not_know(serve, backend) -> None:
    s = serve()
    ids = [remember(s.client, f"note {n} about tea") for n in range(2)]
    for body in ({"query": "tea", "filters": {"community": "drinks"}},
                 {"query": "tea", "filter": {"type": "fact"}}):
        refused = s.client.post("/api/memory/forget", json=body)
        assert refused.status_code in (400, 422)
        assert ("community" in refused.text) or ("filter" in refused.text)
    assert not any(ok(s.client.get(f"/api/memory/{i}"))["is_deleted"] for i in ids)


def test_batch_modify_reports_each_item(serve, backend) -> None:
    s = serve()
    first, second = remember(s.client, "first item"), remember(s.client, "second item")
    body = ok(s.client.post("/api/memory/modify", json={"items": [
        {"id": first, "changes": {"importance": 0.8, "tags": "a,b"}},
        {"id": "unknown", "changes": {"importance": 0.1}},
    ], "reason": "tidy"}))
    assert [r["ok"] for r in body["results"]] == [True, False]
    assert body["results"][0]["memory"]["tags"] == ["a", "b"]
    assert body["results"][1]["error"]["code"] == "not_found"
    null_content = s.client.post("/api/memory/modify", json={"items": [
        {"id": second, "changes": {"content": None}}]})
    assert null_content.status_code == 400


def test_the_review_queue_lists_and_resolves_items(serve, backend: str) -> None:
    s = serve()
    memory_id = remember(s.client, "the API uses REST")
    with s.app.reviews.pipeline.write() as tx:  # as the extraction worker parks a proposal
        item_id = tx.add_review(
            memory_id=memory_id, source_memory_id=None, action="update",
            old_content="the API uses REST", new_content="the API uses GraphQL",
            proposal={"action": "update"}, verdict=None, reason="contradiction", now=utc_now(),
        )
    items = ok(s.client.get("/api/memory/review-queue"))["items"]
    assert [i["id"] for i in items] == [item_id]
    rejected = ok(s.client.post(f"/api/memory/review-queue/{item_id}/reject"))
    assert rejected["status"] == "rejected"
    again = s.client.post(f"/api/memory/review-queue/{item_id}/approve")
    assert again.status_code == 409
    assert ok(s.client.get("/api/memory/review-queue"))["items"] == []
    assert s.client.post("/api/memory/review-queue/nope/approve").status_code == 404


def test_approving_a_review_whose_memory_moved_answers_409_with_both_texts(
    serve, backend: str
) -> None:
    s = serve()
    memory_id = remember(s.client, "The billing service uses PostgreSQL 15")
    with s.app.reviews.pipeline.write() as tx:
        stale = tx.add_review(
            memory_id=memory_id, source_memory_id=None, action="update",
            old_content="The billing service uses PostgreSQL 15",
            new_content="The billing service does not use PostgreSQL 15",
            proposal={"action": "update"}, verdict=None, reason="contradiction", now=utc_now(),
            target_version=1,
        )
        legacy = tx.add_review(  # parked before target versions were kept: text compared
            memory_id=memory_id, source_memory_id=None, action="update",
            old_content="The billing service uses PostgreSQL 15",
            new_content="The billing service runs on SQLite",
            proposal={"action": "update"}, verdict=None, reason="contradiction", now=utc_now(),
        )
    newer = "The billing service now uses MongoDB"
    ok(s.client.patch(f"/api/memory/{memory_id}", json={"content": newer}))
    for item_id, proposed in ((stale, "does not use PostgreSQL 15"), (legacy, "runs on SQLite")):
        reply = s.client.post(f"/api/memory/review-queue/{item_id}/approve")
        assert reply.status_code == 409, reply.text
        body = reply.json()
        assert body["code"] == "review_stale"
        assert body["current_content"] == newer and proposed in body["review_new_content"]
        assert newer in body["error"] and proposed in body["error"]
    assert ok(s.client.get(f"/api/memory/{memory_id}"))["content"] == newer
    pending = ok(s.client.get("/api/memory/review-queue"))["items"]
    assert {i["id"] for i in pending} == {stale, legacy}
    # (both parked in one millisecond: their order is the store's tie-break, so found by id)
    assert {i["id"]: i["target_version"] for i in pending} == {stale: 1, legacy: None}
    # The 8-character id a listing shows is enough to resolve an item.
    assert ok(s.client.post(f"/api/memory/review-queue/{stale[:8]}/reject"))["id"] == stale


# --- repair, embeddings ------------------------------------------------------------------------


def test_repair_actions(serve, backend) -> None:
    s = serve()
    memory_id = remember(s.client, "a memory to repair")
    queue = extract_job(s.app, memory_id)
    job = queue.lease("2020-01-01T00:00:00.000Z", job_types=["extract"])
    assert job is not None
    released = ok(s.client.post("/api/repair/release-stale-leases", json={"older_than_ms": 0}))
    assert released["released"] == 1
    # the two attempts left fail: the job goes dead
    while (leased := queue.lease(utc_now(), job_types=["extract"])) is not None:
        queue.fail(leased.id, "boom", utc_now())
    assert s.app.job(job.id).status == "dead"
    listed = ok(s.client.get("/api/pipeline/jobs", params={"status": "dead"}))
    assert [j["id"] for j in listed["items"]] == [job.id]
    assert ok(s.client.get(f"/api/pipeline/jobs/{job.id[:8]}"))["id"] == job.id
    assert s.client.get("/api/pipeline/jobs/ffff0000").status_code == 404
    assert ok(s.client.post("/api/repair/requeue-dead"))["requeued"] == 1
    assert ok(s.client.get("/api/repair/fts-check"))["ok"] is True
    rebuilt = ok(s.client.post("/api/repair/fts-rebuild"))
    assert rebuilt["check"]["ok"] is True
    assert ok(s.client.post("/api/repair/re-embed"))["missing"] == 0
    assert s.app.get(memory_id).content == "a memory to repair"


def test_embeddings_status_and_health(serve, backend) -> None:
    s = serve()
    remember(s.client, "an embedded memory")
    status = ok(s.client.get("/api/embeddings/status"))
    assert status["provider"] == "hash" and status["audit"]["embedded"] == 1
    health = ok(s.client.get("/api/embeddings/health"))
    assert health["ok"] is True and health["dimensions"] == 64


# --- telemetry -------------------------------------------------------------------------------


def test_telemetry_records_routes_by_template_and_errors_without_content(serve, backend) -> None:
    s = serve()
    secret = "tangerine-5512"
    memory_id = remember(s.client, f"the code word is {secret}")
    s.client.post("/api/memory/recall", json={"query": secret})
    s.client.get(f"/api/memory/{memory_id}")
    s.client.get("/api/memory/does-not-exist", headers={"X-Request-Id": "req-404"})
    latency = ok(s.client.get("/api/telemetry/latency"))["operations"]
    assert latency["GET /api/memory/{memory_id}"]["count"] == 2
    assert latency["POST /api/memory/recall"]["p95_ms"] > 0
    errors = ok(s.client.get("/api/telemetry/errors"))["errors"]
    assert errors[0] == {**errors[0], "operation": "GET /api/memory/{memory_id}",
                         "status": 404, "code": "not_found", "request_id": "req-404"}
    usage = ok(s.client.get("/api/telemetry/usage"))["counters"]
    assert usage["requests"] >= 5 and usage["responses.4xx"] == 1
    status = ok(s.client.get("/api/status"))
    assert status["telemetry"]["requests"] >= 5 and status["telemetry"]["errors"] == 1
    everything = s.client.get("/api/telemetry/latency").text + s.client.get(
        "/api/telemetry/errors").text + s.client.get("/api/telemetry/usage").text
    assert secret not in everything and memory_id not in everything


def test_the_recall_qa_ledger_needs_the_flag_analytics_and_stays_in_scope(serve, backend) -> None:
    off = serve()
    assert off.client.get("/api/telemetry/search").status_code == 404
    s = serve(pipeline=PipelineConfig(
        telemetry=PipelineTelemetryConfig(memory_search_qa_enabled=True)))
    remember(s.client, "orchids need indirect light")
    ok(s.client.post("/api/memory/recall", json={"query": "orchid light"}))
    rows = ok(s.client.get("/api/telemetry/search"))["items"]
    assert len(rows) == 1 and rows[0]["query"] == "orchid light"
    export = s.client.get("/api/telemetry/search/export")
    assert export.status_code == 200 and export.json()["count"] == 1
    assert "attachment" in export.headers["content-disposition"]
    readonly = auth(issue(s.app, "readonly"))  # recall + diagnostics, no analytics
    assert s.client.get("/api/telemetry/search", headers=readonly).status_code == 403
    other_agent = auth(issue(s.app, "operator", agent="agent-b"))
    scoped = s.client.get("/api/telemetry/search", headers=other_agent)
    assert scoped.status_code == 200 and scoped.json()["items"] == []


# --- config and identity -----------------------------------------------------------------------


def test_config_and_identity_files(serve) -> None:
    s = serve()
    config = ok(s.client.get("/api/config"))
    assert config["workspace"] == str(s.cfg.workspace) and "llm" in config
    put = ok(s.client.put("/api/identity/USER.md", json={"content": "# User\nlikes tea\n"}))
    assert put["bytes"] == len("# User\nlikes tea\n")
    assert ok(s.client.get("/api/identity/USER.md"))["content"] == "# User\nlikes tea\n"
    assert (s.cfg.workspace / "USER.md").read_text() == "# User\nlikes tea\n"
    assert s.client.get("/api/identity/agent.yaml").status_code == 400
    assert s.client.put("/api/identity/..%2Fagent.yaml", json={"content": "x"}).status_code in (400, 404)
    big = s.client.put("/api/identity/SOUL.md", json={"content": "x" * (64 * 1024 + 1)})
    assert big.status_code == 400 and "64" in big.json()["error"]
    readonly = auth(issue(s.app, "readonly"))
    assert s.client.put("/api/identity/SOUL.md", json={"content": "x"},
                        headers=readonly).status_code == 403
    assert s.client.post("/api/repair/fts-rebuild", headers=readonly).status_code == 403


# --- docs/api.md -------------------------------------------------------------------------------


def served_routes(api) -> list[tuple[str, str, str]]:
    """(method, path, permission) of every API route the daemon serves. FastAPI includes
    routers lazily: each included router yields route contexts with the full path."""
    found = []
    for context in _flattened(api.routes):
        route = getattr(context, "original_route", context)
        if not isinstance(route, APIRoute) or not context.include_in_schema:
            continue
        permission = next((getattr(d.call, PERMISSION_ATTR) for d in route.dependant.dependencies
                           if hasattr(d.call, PERMISSION_ATTR)), "public")
        for method in sorted(route.methods - {"HEAD"}):
            found.append((method, context.path, permission))
    return found


def _flattened(routes):
    for route in routes:
        if hasattr(route, "effective_candidates"):
            yield from _flattened(route.effective_candidates())
        else:
            yield route


def test_docs_api_md_lists_every_route_with_its_method_and_permission(serve) -> None:
    documented = set()
    for line in API_DOC.read_text("utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"[A-Z]+", cells[0]):
            documented.add((cells[0], cells[1], cells[2]))
    served = served_routes(serve().api)
    assert ("POST", "/api/memory/forget", "forget") in served  # the walk finds routes at all
    missing = [r for r in served if r not in documented]
    assert not missing, f"routes missing from docs/api.md (method, path, permission): {missing}"


def test_a_scoped_token_batch_forgets_only_inside_its_scope_and_stays_out_of_maintenance(
    serve, backend,
) -> None:
    s = serve()
    agent_a = auth(issue(s.app, "agent", agent="agent-a"))
    mine = ok(s.client.post(REMEMBER, json={"content": "agent a keeps notes on tea"},
                            headers=agent_a))["id"]
    other = remember(s.client, "the default agent keeps notes on tea")
    preview = ok(s.client.post("/api/memory/forget", json={"ids": [mine, other]},
                               headers=agent_a))
    assert [m["id"] for m in preview["memories"]] == [mine] and preview["missing"] == [other]
    by_query = ok(s.client.post("/api/memory/forget", json={"query": "notes tea"},
                                headers=agent_a))
    assert [m["id"] for m in by_query["memories"]] == [mine]
    done = ok(s.client.post("/api/memory/forget", json={
        "query": "notes tea", "mode": "execute", "confirm_token": by_query["confirm_token"],
    }, headers=agent_a))
    assert done["succeeded"] == 1
    assert ok(s.client.get(f"/api/memory/{other}"))["is_deleted"] is False
    modified = ok(s.client.post("/api/memory/modify", json={"items": [
        {"id": other, "changes": {"importance": 0.1}}]}, headers=agent_a))
    assert modified["results"][0]["error"]["code"] == "not_found"
    everything = s.client.post("/api/memory/forget", json={}, headers=agent_a)
    assert everything.status_code == 400
    # An operator holds diagnostics and admin-free maintenance permissions; scoped, it is kept
    # out of every route that spans all agents.
    scoped_operator = auth(issue(s.app, "operator", agent="agent-a"))
    for method, path in (("GET", "/api/pipeline/status"), ("GET", "/api/repair/fts-check"),
                         ("GET", "/api/memory/review-queue"), ("GET", "/api/config"),
                         ("GET", "/api/telemetry/latency"), ("GET", "/api/telemetry/usage"),
                         ("GET", "/api/telemetry/errors")):
        assert s.client.request(method, path, headers=scoped_operator).status_code == 403, path
    unscoped_operator = auth(issue(s.app, "operator"))
    assert s.client.get("/api/telemetry/latency", headers=unscoped_operator).status_code == 200


def test_recall_over_http_labels_its_ledger_row_with_the_route_and_the_agent(serve, backend) -> None:
    s = serve(pipeline=PipelineConfig(
        telemetry=PipelineTelemetryConfig(memory_search_qa_enabled=True)))
    agent_a = auth(issue(s.app, "operator", agent="agent-a"))
    ok(s.client.post(REMEMBER, json={"content": "agent a likes green tea"}, headers=agent_a))
    ok(s.client.get("/api/memory/search", params={"q": "green tea"}, headers=agent_a))
    ok(s.client.post("/api/memory/recall", json={"query": "coffee"}))
    rows = ok(s.client.get("/api/telemetry/search", headers=agent_a))["items"]
    assert [(r["route"], r["agent_id"], r["query"]) for r in rows] == [
        ("GET /api/memory/search", "agent-a", "green tea")]
    assert ok(s.client.get("/api/telemetry/search"))["total"] == 2  # unscoped admin: all rows
