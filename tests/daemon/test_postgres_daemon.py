"""The daemon on PostgreSQL (`store.backend: postgres`): every route answers, nothing from a
table that is not there.

The memory routes and auth run on both backends in test_routes.py and test_auth.py (the
`backend` fixture); two daemon processes on one database are in test_shared_database.py.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import psycopg
import pytest
from fastapi import routing
from fastapi.routing import APIRoute

from auth_tokens import issue, mcp_http
from mcp import Client
from signet.config import StoreConfig


def run_mcp(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def main() -> list[Any]:
        async with Client(mcp_http(url, token)) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return anyio.run(main)


def test_no_route_answers_500_on_postgres(serve: Any, pg_url: str) -> None:
    """Every route and method, called with an admin token on a postgres daemon (an empty JSON
    body where one is sent): an answer, a refusal by name (501) or a bad request, never an
    internal error from a table that is not there."""
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    s.client.post("/api/memory/remember", json={"content": "something to find"})
    statuses: dict[tuple[str, str], int] = {}
    routes = [rc for rc in routing.iter_route_contexts(s.api.routes)
              if isinstance(rc.original_route, APIRoute)]
    for route in routes:
        for method in sorted(route.methods - {"HEAD"}):
            path = route.path.replace("{", "x").replace("}", "")
            body = {} if method in ("POST", "PUT", "PATCH") else None
            reply = s.client.request(method, path, json=body)
            statuses[(method, route.path)] = reply.status_code
            assert reply.status_code < 500 or reply.status_code == 501, (path, reply.text)
            if reply.status_code == 501:
                assert reply.json()["code"] == "not_on_backend", reply.text
    assert statuses[("GET", "/api/memories")] == 200
    assert statuses[("GET", "/api/status")] == 200
    # Every feature is on PostgreSQL now: no route refuses for want of one.
    assert list(statuses.values()).count(501) == 0
    assert statuses[("GET", "/api/skills")] == 200


def test_status_names_the_backend(serve: Any, pg_url: str) -> None:
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    s.client.post("/api/memory/remember", json={"content": "one"})
    body = s.client.get("/api/status").json()
    assert body["backend"] == "postgres" and body["memories"] == 1
    assert body["embeddings"]["embedded"] == 1 and body["maintenance"]["last_run"] is None
    s.client.post("/api/repair/run")
    assert s.client.get("/api/status").json()["maintenance"]["last_run"]["mode"] == "observe"


def test_mcp_store_and_search_on_postgres(serve: Any, pg_url: str) -> None:
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    token = issue(s.app, "agent")
    stored, searched = run_mcp(f"{s.url}/mcp", token, [
        ("memory_store", {"content": "The staging database lives in Frankfurt"}),
        ("memory_search", {"query": "where is the staging database"}),
    ])
    assert not stored.is_error and not searched.is_error, (stored, searched)
    memory_id = stored.structured_content["id"]
    assert [h["id"] for h in searched.structured_content["results"]][:1] == [memory_id]
    assert s.app.get(memory_id).content == "The staging database lives in Frankfurt"


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid", "full"])
def test_recall_modes_on_postgres(serve: Any, pg_url: str, mode: str) -> None:
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    ids = [s.client.post("/api/memory/remember", json={"content": c}).json()["id"] for c in (
        "Ana deploys the billing service on Fridays", "The cafeteria serves soup on Mondays")]
    body = s.client.post("/api/memory/recall",
                         json={"query": "billing service deploys", "mode": mode}).json()
    assert body["results"][0]["id"] == ids[0], body
    evidence = body["results"][0]["evidence"]
    assert (evidence["lexical"] is not None) == (mode != "vector")
    assert (evidence["semantic"] is not None) == (mode != "keyword")
    # full adds the graph channels (an empty graph here): nothing is degraded.
    assert (body["method"], body["meta"]["degraded"]) == (mode, [])


def test_the_hint_channel_and_expand_on_postgres(serve: Any, pg_url: str) -> None:
    """The one Recaller on postgres searches the prospective hints as their own channel (what
    the hints worker writes), and `expand` reads the lineage: nothing is degraded."""
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    memory_id = s.client.post("/api/memory/remember",
                              json={"content": "Ana deploys the billing service"}).json()["id"]
    query = {"query": "who ships invoices", "mode": "keyword"}
    assert s.client.post("/api/memory/recall", json=query).json()["results"] == []
    # As the hints worker writes them (its own tests run it on postgres).
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE memories SET hints = 'who ships invoices' WHERE id = %s",
                     (memory_id,))
    hinted = s.client.post("/api/memory/recall", json={**query, "expand": True}).json()
    assert [h["id"] for h in hinted["results"]] == [memory_id]
    assert hinted["results"][0]["evidence"]["hint"] == 1.0
    assert hinted["meta"]["degraded"] == [] and hinted["method"] == "keyword"


def test_a_scoped_token_recalls_only_its_slice_on_postgres(serve: Any, pg_url: str) -> None:
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    for project in ("alpha", "beta"):
        s.client.post("/api/memory/remember",
                      json={"content": f"The {project} launch code is secret", "project": project})
    token = issue(s.app, "agent", project="alpha")
    reply = httpx.post(f"{s.url}/api/memory/recall", json={"query": "launch code secret"},
                       headers={"Authorization": f"Bearer {token}"})
    assert [h["project"] for h in reply.json()["results"]] == ["alpha"]


def test_init_and_login_links_on_postgres_use_the_databases_tokens(
    tmp_path: Any, pg_url: str
) -> None:
    """`signet init` and `signet token login-link` on a postgres workspace write to the shared
    database (its tokens, its signing key), not to a SQLite file nobody serves."""
    import os
    import subprocess
    import sys

    from signet.daemon.tokens import TokenAuthority
    from signet.store.postgres.core import PostgresCore

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(f"store:\n  backend: postgres\n  url: {pg_url!r}\n")
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(tmp_path),
           "HF_HUB_OFFLINE": "1"}
    for args in (["init"], ["token", "login-link", "--json"]):
        done = subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    code = done.stdout.split("code=")[1].split('"')[0].strip()
    core = PostgresCore.open(pg_url)
    try:
        authority = TokenAuthority.for_core(core)
        installed = (workspace / ".daemon" / "token").read_text().strip()
        assert authority.verify(installed).role == "admin"
        assert authority.exchange(code).row.role == "admin"
    finally:
        core.close()
    assert not (workspace / "memory" / "memories.db").exists()
