"""The daemon on PostgreSQL (`store.backend: postgres`, core_app.py): every app operation is
written for the shared store, what it does not hold refuses by name, and nothing answers from a
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
from signet.app import SignetApp
from signet.config import StoreConfig
from signet.core_app import SHARED, UNPORTED, UNPORTED_PARTS, CoreAppOps, Unported
from signet.errors import NotOnBackend
from signet.services.delegate import Delegate
from signet.store.backend import NOT_PORTED


def run_mcp(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def main() -> list[Any]:
        async with Client(mcp_http(url, token)) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return anyio.run(main)


def test_every_app_operation_is_written_for_the_shared_store_or_refused_by_name() -> None:
    """A new SignetApp operation must be ported (written in CoreAppOps, or SHARED: SignetApp's
    own, over the one memory service) or listed in UNPORTED: else it would run SQLite code on a
    postgres daemon."""
    public = {n for n in dir(SignetApp) if not n.startswith("_") and callable(getattr(SignetApp, n))}
    own = {n for n in vars(CoreAppOps) if not n.startswith("_")}
    assert own & set(SHARED) == set() and set(SHARED) <= public
    assert set(SHARED) & set(UNPORTED) == set()
    written = (own | set(SHARED)) - set(UNPORTED)
    # A Delegate over a service CoreApp builds too (not an `Unported` stand-in) is the same
    # service on the shared store: written once, for both (the memory service among them).
    written |= {n for n, v in vars(SignetApp).items()
                if isinstance(v, Delegate) and v.service not in UNPORTED_PARTS}
    config_only = {"open", "secret_store", "effective_config", "identity_file",
                   "write_identity_file", "token_authority_store", "release_worker_leases",
                   "checkpoint"}
    assert public - written - set(UNPORTED) - config_only == set()
    assert set(UNPORTED) <= public
    assert set(UNPORTED.values()) - {"batch remember", "pipeline writes"} <= set(NOT_PORTED)


def test_a_stand_in_refuses_any_use_by_the_name_of_its_feature() -> None:
    """What the postgres app does not hold (the SQLite store, the hybrid Recaller) is an
    `Unported` stand-in: any use is a 501 naming it, never SQLite code on a postgres daemon."""
    store = Unported("the SQLite store", "postgres")
    assert not store
    with pytest.raises(NotOnBackend, match="the SQLite store") as refused:
        store.reader()
    assert refused.value.code == "not_on_backend"


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


def test_status_names_the_backend_and_what_it_lacks(serve: Any, pg_url: str) -> None:
    s = serve(store=StoreConfig(backend="postgres", url=pg_url))
    s.client.post("/api/memory/remember", json={"content": "one"})
    body = s.client.get("/api/status").json()
    assert body["backend"] == "postgres" and body["memories"] == 1
    assert body["not_on_backend"] == sorted(set(UNPORTED.values()))
    assert "knowledge graph" not in body["not_on_backend"]
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
    from signet.store.postgres.core import PgCore

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
    core = PgCore.open(pg_url)
    try:
        authority = TokenAuthority.for_core(core)
        installed = (workspace / ".daemon" / "token").read_text().strip()
        assert authority.verify(installed).role == "admin"
        assert authority.exchange(code).row.role == "admin"
    finally:
        core.close()
    assert not (workspace / "memory" / "memories.db").exists()
