"""Authentication, permissions, scope and the request guards, over real HTTP (docs/security.md).

Each server is real (conftest.serve: uvicorn on a free loopback port around a tmp workspace);
tokens are issued by the same `TokenAuthority` the daemon uses. The route enumeration walks the
live app, so a route added later without a permission fails here.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from typing import Any

import anyio
import httpx
import pytest
from daemon_process import daemon_env, free_port, make_workspace
from fastapi import routing
from fastapi.routing import APIRoute

from auth_tokens import auth, authority, issue, mcp_http
from mcp import Client
from signet.app import SignetApp
from signet.clock import ManualClock, stamp
from signet.config import AuthConfig, Config, NetworkConfig
from signet.daemon.auth import PERMISSION_ATTR, PERMISSIONS
from signet.daemon.guards import Authenticate, HostGuard, is_public
from signet.daemon.mcp_access import TOOLS
from signet.daemon.tokens import TokenAuthority, refuse_open_bind
from signet.errors import ConfigError, NotFound, Unauthorized
from signet.store.db import Store

REMEMBER = "/api/memory/remember"


def api_routes(api: Any) -> list[Any]:
    """The app's routes as served: included routers flattened, with their prefixes and
    router-level dependencies applied."""
    contexts = routing.iter_route_contexts(api.routes)
    return [rc for rc in contexts if isinstance(rc.original_route, APIRoute)]


def declared_permissions(route: Any) -> set[str]:
    """Every permission a route's dependency tree requires (auth.require marks its checks)."""
    found: set[str] = set()
    pending = list(route.dependant.dependencies)
    while pending:
        dep = pending.pop()
        if getattr(dep.call, PERMISSION_ATTR, None):
            found.add(getattr(dep.call, PERMISSION_ATTR))
        pending.extend(dep.dependencies)
    return found


def concrete(path: str) -> str:
    """A path with its parameters filled in, for a request that reaches the route."""
    return path.replace("{", "x").replace("}", "")


def assert_error(reply: httpx.Response, status: int, code: str) -> None:
    assert reply.status_code == status, reply.text
    assert reply.json()["code"] == code, reply.text


# --- every route is guarded -------------------------------------------------------------------


def test_every_route_declares_a_permission_and_refuses_a_token_without_it(serve) -> None:
    s = serve()
    routes = api_routes(s.api)
    assert len(routes) >= 15
    checked = 0
    for route in routes:
        if is_public(route.path):
            continue
        needs = declared_permissions(route)
        assert needs, f"{route.path} declares no permission"
        assert needs <= set(PERMISSIONS)
        for permission in needs:
            others = [p for p in PERMISSIONS if p != permission]
            lacking = issue(s.app, "admin", permissions=others)
            for method in route.methods - {"HEAD"}:
                reply = s.client.request(method, concrete(route.path), headers=auth(lacking))
                assert_error(reply, 403, "forbidden")
                assert permission in reply.json()["error"]
                checked += 1
    assert checked >= 15


def test_every_path_but_health_and_login_needs_a_token(serve) -> None:
    s = serve()
    paths = {(m, concrete(r.path)) for r in api_routes(s.api) for m in r.methods}
    paths |= {("GET", "/openapi.json"), ("GET", "/docs"), ("POST", "/mcp"), ("GET", "/mcp"),
              ("GET", "/no-such-route")}
    for method, path in sorted(paths):
        reply = httpx.request(method, f"{s.url}{path}")
        if is_public(path):
            assert reply.status_code != 401, (method, path)
            continue
        assert_error(reply, 401, "unauthorized")
        assert reply.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{s.url}/health").status_code == 200


def test_openapi_needs_a_token_and_documents_the_refusals(serve) -> None:
    s = serve()
    assert httpx.get(f"{s.url}/openapi.json").status_code == 401
    spec = s.client.get("/openapi.json").json()
    recall = spec["paths"]["/api/memory/recall"]["post"]["responses"]
    assert {"401", "403", "421", "429"} <= set(recall)


@pytest.mark.parametrize("header", [
    "Bearer", "Bearer not-a-token", "Basic dXNlcjpwYXNz", "bearer sgt1.e30.AAAA",
    "Bearer sgt1.!!!.???", "Bearer " + "a" * 5000,
])
def test_malformed_tokens_are_401(serve, backend, header) -> None:
    s = serve()
    reply = httpx.get(f"{s.url}/api/memories", headers={"Authorization": header})
    assert_error(reply, 401, "unauthorized")


def test_a_token_whose_payload_was_changed_is_401(serve, backend) -> None:
    s = serve()
    token = issue(s.app, "readonly")
    prefix, payload, signature = token.split(".")
    admin = issue(s.app, "admin")
    forged = f"{prefix}.{admin.split('.')[1]}.{signature}"  # an admin payload, a readonly MAC
    assert_error(httpx.get(f"{s.url}/api/status", headers=auth(forged)), 401, "unauthorized")
    assert httpx.get(f"{s.url}/api/status", headers=auth(token)).status_code == 200


def test_a_token_expires_when_the_clock_passes_its_ttl(tmp_path) -> None:
    clock = ManualClock()
    cfg = Config.default(tmp_path / "ws")
    with SignetApp.open(cfg, embedder=None, llm=None, clock=clock) as app:
        tokens = TokenAuthority.for_workspace(cfg, app.store, app.clock)
        issued = tokens.issue(role="agent", ttl=timedelta(hours=1))
        assert issued.row.created_at == stamp(clock)
        clock.advance(minutes=59)
        assert tokens.verify(issued.token).role == "agent"
        clock.advance(minutes=2)
        with pytest.raises(Unauthorized, match="expired"):
            tokens.verify(issued.token)


def test_an_expired_token_is_401(serve, backend) -> None:
    s = serve()
    token = authority(s.app).issue(role="admin", ttl=timedelta(seconds=-1)).token
    reply = httpx.get(f"{s.url}/api/memories", headers=auth(token))
    assert_error(reply, 401, "unauthorized")
    assert "expired" in reply.json()["error"]


def test_a_token_of_another_install_is_401(serve, tmp_path) -> None:
    s = serve()
    other = Config.default(tmp_path / "other")
    store = Store.open(other.db_path)
    try:
        foreign = TokenAuthority.for_workspace(other, store).issue(role="admin").token
    finally:
        store.close()
    assert_error(httpx.get(f"{s.url}/api/memories", headers=auth(foreign)), 401, "unauthorized")


def test_a_signed_token_that_was_never_issued_is_401(serve) -> None:
    s = serve()
    token = issue(s.app, "admin")
    s.sql("DELETE FROM tokens")
    assert_error(httpx.get(f"{s.url}/api/memories", headers=auth(token)), 401, "unauthorized")


def test_revocation_takes_effect_on_the_next_request(serve, backend) -> None:
    s = serve()
    issued = authority(s.app).issue(role="agent", name="ci")
    headers = auth(issued.token)
    assert httpx.get(f"{s.url}/api/memories", headers=headers).status_code == 200
    authority(s.app).revoke(issued.row.id)
    reply = httpx.get(f"{s.url}/api/memories", headers=headers)
    assert_error(reply, 401, "unauthorized")
    assert "revoked" in reply.json()["error"]
    with pytest.raises(NotFound):
        authority(s.app).revoke(issued.row.id)


def test_tokens_are_stored_hashed_and_record_their_last_use(serve, backend) -> None:
    s = serve()
    issued = authority(s.app).issue(role="readonly", name="dash")
    httpx.get(f"{s.url}/api/status", headers=auth(issued.token)).raise_for_status()
    raw = b"".join(p.read_bytes() for p in s.cfg.db_path.parent.glob("memories.db*"))
    assert issued.token.encode() not in raw
    assert issued.token.split(".")[2].encode() not in raw
    row = next(r for r in authority(s.app).list() if r.id == issued.row.id)
    assert row.last_used_at is not None and row.permissions == ("diagnostics", "recall")


def test_roles_give_their_permission_sets_and_a_token_never_exceeds_its_role(serve, backend) -> None:
    s = serve()
    readonly = auth(issue(s.app, "readonly"))
    agent = auth(issue(s.app, "agent"))
    assert s.client.post(REMEMBER, json={"content": "admin may write"}).status_code == 200
    assert_error(httpx.post(f"{s.url}{REMEMBER}", json={"content": "no"}, headers=readonly),
                 403, "forbidden")
    assert httpx.post(f"{s.url}/api/memory/recall", json={"query": "write"},
                      headers=readonly).status_code == 200
    assert httpx.post(f"{s.url}{REMEMBER}", json={"content": "agent writes"},
                      headers=agent).status_code == 200
    assert_error(httpx.get(f"{s.url}/api/status", headers=agent), 403, "forbidden")
    with pytest.raises(Exception, match="cannot carry admin"):
        issue(s.app, "readonly", permissions=["recall", "admin"])


# --- scope ------------------------------------------------------------------------------------


def scoped_world(s: Any) -> dict[str, Any]:
    """Memories of agents a and b and of projects p and q; tokens scoped to each."""
    tokens = {
        "a": auth(issue(s.app, "agent", agent="a")),
        "b": auth(issue(s.app, "agent", agent="b")),
        "p": auth(issue(s.app, "agent", project="p")),
    }
    ids = {}
    for who in ("a", "b"):
        reply = httpx.post(f"{s.url}{REMEMBER}", headers=tokens[who],
                           json={"content": f"secret garden note of agent {who}", "pinned": False})
        assert reply.status_code == 200, reply.text
        assert reply.json()["memory"]["agent_id"] == who
        ids[who] = reply.json()["id"]
    for project in ("p", "q"):
        reply = s.client.post(REMEMBER, json={"content": f"secret garden plan of {project}",
                                              "project": project})
        ids[project] = reply.json()["id"]
    return {"tokens": tokens, "ids": ids}


def test_a_scoped_agent_reads_only_its_own_memories_through_every_read_route(serve, backend) -> None:
    s = serve()
    world = scoped_world(s)
    a, ids = world["tokens"]["a"], world["ids"]
    for path in (f"/api/memory/{ids['b']}", f"/api/memory/{ids['b']}/history",
                 f"/api/memory/{ids['p']}"):
        assert_error(httpx.get(f"{s.url}{path}", headers=a), 404, "not_found")
    assert httpx.get(f"{s.url}/api/memory/{ids['a']}", headers=a).status_code == 200
    listed = httpx.get(f"{s.url}/api/memories", headers=a).json()
    assert [m["id"] for m in listed["items"]] == [ids["a"]] and listed["total"] == 1
    for mode in ("hybrid", "keyword", "vector", "full"):
        body = {"query": "secret garden note plan", "mode": mode, "limit": 50, "expand": True}
        hits = httpx.post(f"{s.url}/api/memory/recall", json=body, headers=a).json()["results"]
        assert {h["id"] for h in hits} <= {ids["a"]}, mode
        found = httpx.get(f"{s.url}/api/memory/search", params={"q": "secret garden", "mode": mode},
                          headers=a).json()["results"]
        assert {h["id"] for h in found} <= {ids["a"]}, mode
    asked_other = httpx.get(f"{s.url}/api/memories", params={"project": "q"},
                            headers=world["tokens"]["p"])
    assert_error(asked_other, 403, "forbidden")
    in_p = httpx.get(f"{s.url}/api/memories", headers=world["tokens"]["p"]).json()["items"]
    assert [m["id"] for m in in_p] == [ids["p"]]


def test_a_scoped_agent_cannot_change_anothers_memory(serve) -> None:
    s = serve()
    world = scoped_world(s)
    a, b_id = world["tokens"]["a"], world["ids"]["b"]
    before = s.app.get(b_id)
    attempts = [
        ("PATCH", f"/api/memory/{b_id}", {"json": {"content": "overwritten by a"}}),
        ("DELETE", f"/api/memory/{b_id}", {"params": {"force": "true"}}),
        ("POST", f"/api/memory/{b_id}/recover", {"json": {}}),
        ("POST", "/api/memory/feedback", {"json": {"memory_id": b_id, "feedback": "negative"}}),
    ]
    for method, path, kwargs in attempts:
        reply = httpx.request(method, f"{s.url}{path}", headers=a, **kwargs)
        assert_error(reply, 404, "not_found")
    assert s.app.get(b_id) == before
    assert s.sql("SELECT count(*) FROM agent_feedback") == [(0,)]
    s.app.forget(b_id)
    assert_error(httpx.post(f"{s.url}/api/memory/{b_id}/recover", headers=a, json={}),
                 404, "not_found")
    assert s.app.get(b_id).is_deleted


def test_scoped_writes_land_in_the_scope(serve, backend) -> None:
    s = serve()
    p = auth(issue(s.app, "agent", project="p", agent="a"))
    made = httpx.post(f"{s.url}{REMEMBER}", json={"content": "scoped write"}, headers=p).json()
    assert (made["memory"]["project"], made["memory"]["agent_id"]) == ("p", "a")
    elsewhere = httpx.post(f"{s.url}{REMEMBER}", json={"content": "x", "project": "q"}, headers=p)
    assert_error(elsewhere, 403, "forbidden")
    moved = httpx.patch(f"{s.url}/api/memory/{made['id']}", json={"project": "q"}, headers=p)
    assert_error(moved, 403, "forbidden")
    assert s.app.get(made["id"]).project == "p"


def test_an_idempotency_key_cannot_replay_another_scopes_memory(serve) -> None:
    s = serve()
    a = auth(issue(s.app, "agent", agent="a"))
    b = auth(issue(s.app, "agent", agent="b"))
    body = {"content": "a's private note", "idempotency_key": "k1"}
    first = httpx.post(f"{s.url}{REMEMBER}", json=body, headers=a).json()
    replay = httpx.post(f"{s.url}{REMEMBER}", json={"content": "b's", "idempotency_key": "k1"},
                        headers=b).json()
    assert replay["id"] != first["id"] and replay["memory"]["content"] == "b's"


def test_scoped_tokens_are_kept_out_of_cross_scope_routes(serve, backend) -> None:
    s = serve()
    a = auth(issue(s.app, "admin", agent="a"))
    for path in ("/api/knowledge/entities", "/api/knowledge/stats", "/api/knowledge/communities"):
        assert_error(httpx.get(f"{s.url}{path}", headers=a), 403, "forbidden")
    assert s.client.get("/api/knowledge/stats").status_code == 200


# --- MCP at /mcp ------------------------------------------------------------------------------


def run_mcp(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def main() -> list[Any]:
        out = []
        async with Client(mcp_http(url, token)) as client:
            for tool, arguments in calls:
                out.append(await client.call_tool(tool, arguments))
        return out

    return anyio.run(main)


def test_mcp_tools_check_the_tokens_permission(serve, backend) -> None:
    s = serve()
    readonly = issue(s.app, "readonly")
    stored, searched = run_mcp(f"{s.url}/mcp", readonly, [
        ("memory_store", {"content": "readonly cannot write this"}),
        ("memory_search", {"query": "anything"}),
    ])
    assert stored.is_error and "remember" in stored.content[0].text
    assert not searched.is_error
    assert s.app.list().total == 0
    assert {rule.permission for rule in TOOLS.values()} <= set(PERMISSIONS)


def test_mcp_tools_honour_the_tokens_scope(serve, backend) -> None:
    s = serve()
    world = scoped_world(s)
    ids = world["ids"]
    a = issue(s.app, "agent", agent="a")
    results = run_mcp(f"{s.url}/mcp", a, [
        ("memory_search", {"query": "secret garden", "limit": 50}),
        ("memory_list", {"limit": 50}),
        ("memory_get", {"id": ids["b"]}),
        ("memory_forget", {"id": ids["b"], "force": True}),
        ("memory_store", {"content": "stored by a over mcp"}),
    ])
    search, listed, got, forgot, stored = results
    assert {h["id"] for h in search.structured_content["results"]} == {ids["a"]}
    assert {m["id"] for m in listed.structured_content["items"]} == {ids["a"]}
    assert got.is_error and forgot.is_error and "not found" in got.content[0].text
    assert not s.app.get(ids["b"]).is_deleted
    assert s.app.get(stored.structured_content["id"]).agent_id == "a"


# --- Host, Origin, rate, size -----------------------------------------------------------------


def test_a_foreign_host_header_is_refused_against_dns_rebinding(serve) -> None:
    s = serve()
    port = s.url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}",
                 f"localhost:{int(port) + 1}", ""):
        for path in ("/health", "/api/memories"):
            reply = s.client.get(path, headers={"Host": host})
            assert_error(reply, 421, "host_not_allowed")
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
        assert s.client.get("/api/memories", headers={"Host": host}).status_code == 200


def test_allowed_hosts_extend_the_host_allow_list(serve) -> None:
    s = serve(network=NetworkConfig(allowed_hosts=("signet.tailnet.ts.net",)))
    port = s.url.rsplit(":", 1)[1]
    assert s.client.get("/health", headers={"Host": f"signet.tailnet.ts.net:{port}"}).status_code == 200
    assert s.client.get("/health", headers={"Host": "other.ts.net"}).status_code == 421


def test_cors_allows_only_the_daemons_own_origins_and_never_a_wildcard(serve) -> None:
    s = serve(network=NetworkConfig(cors_origins=("http://localhost:5173",)))
    port = s.url.rsplit(":", 1)[1]
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}", "http://localhost:5173"):
        reply = httpx.options(f"{s.url}/api/memory/recall", headers={"Origin": origin, **preflight})
        assert reply.status_code == 204
        assert reply.headers["access-control-allow-origin"] == origin
        assert "authorization" in reply.headers["access-control-allow-headers"].lower()
        real = s.client.get("/api/memories", headers={"Origin": origin})
        assert real.status_code == 200 and real.headers["access-control-allow-origin"] == origin
    for origin in ("http://evil.example", "null", f"http://localhost:{int(port) + 1}",
                   f"https://localhost:{port}"):
        reply = httpx.options(f"{s.url}/api/memory/recall", headers={"Origin": origin, **preflight})
        assert_error(reply, 403, "origin_not_allowed")
        assert "access-control-allow-origin" not in reply.headers
        write = s.client.post(REMEMBER, json={"content": "csrf"}, headers={"Origin": origin})
        assert_error(write, 403, "origin_not_allowed")
    assert s.app.list().total == 0


def test_mutating_calls_are_rate_limited_per_token(serve, backend) -> None:
    s = serve(auth=AuthConfig(rate_limit_per_minute=5))
    for n in range(5):
        assert s.client.post(REMEMBER, json={"content": f"write {n}"}).status_code == 200
    limited = s.client.post(REMEMBER, json={"content": "one too many"})
    assert_error(limited, 429, "rate_limited")
    # Reads are not limited, and another token has its own budget.
    for _ in range(10):
        assert s.client.post("/api/memory/recall", json={"query": "write"}).status_code == 200
    other = auth(issue(s.app, "agent"))
    assert httpx.post(f"{s.url}{REMEMBER}", json={"content": "mine"}, headers=other).status_code == 200
    assert s.app.list().total == 6


def test_an_oversized_body_is_413_with_a_token_and_never_read_without_one(serve) -> None:
    s = serve()
    body = b'{"content": "' + b"x" * (1024 * 1024 + 10) + b'"}'
    for headers, status in (({}, 401), (dict(s.client.headers), 413)):
        headers = {k: v for k, v in headers.items() if k.lower() in ("authorization",)}
        reply = httpx.post(f"{s.url}{REMEMBER}", content=body,
                           headers={**headers, "Content-Type": "application/json"})
        assert reply.status_code == status
    assert s.app.list().total == 0


# --- login link -------------------------------------------------------------------------------


def test_a_login_code_exchanges_once_for_a_working_token(serve, backend) -> None:
    s = serve()
    code = authority(s.app).login_code()
    first = httpx.get(f"{s.url}/auth/login", params={"code": code})
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    token = first.json()["token"]
    assert httpx.get(f"{s.url}/api/status", headers=auth(token)).status_code == 200
    assert_error(httpx.get(f"{s.url}/auth/login", params={"code": code}), 401, "unauthorized")
    assert_error(httpx.post(f"{s.url}/auth/login", json={"code": "guess"}), 401, "unauthorized")
    posted = httpx.post(f"{s.url}/auth/login", json={"code": authority(s.app).login_code()})
    assert posted.status_code == 200 and posted.json()["role"] == "admin"
    assert_error(httpx.post(f"{s.url}/auth/login", json={}), 400, "invalid_input")
    assert_error(httpx.post(f"{s.url}/auth/login"), 400, "invalid_input")


def test_an_expired_login_code_is_refused(serve) -> None:
    s = serve()
    code = authority(s.app).login_code()
    s.sql("UPDATE tokens SET expires_at = '2000-01-01T00:00:00.000Z' WHERE role = 'login'")
    assert_error(httpx.get(f"{s.url}/auth/login", params={"code": code}), 401, "unauthorized")
    assert all(r.role != "login" for r in authority(s.app).list())


# --- binding and the install token ------------------------------------------------------------


def test_a_non_loopback_bind_needs_team_or_hybrid_auth(tmp_path) -> None:
    cfg = Config.default(tmp_path)
    for bind in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        refuse_open_bind(cfg.replace(bind=bind))
    for bind in ("0.0.0.0", "::", "192.168.1.20"):
        with pytest.raises(ConfigError, match="auth.mode"):
            refuse_open_bind(cfg.replace(bind=bind))
        for mode in ("team", "hybrid"):
            refuse_open_bind(cfg.replace(bind=bind, auth=AuthConfig(mode=mode)))


def test_the_daemon_refuses_to_start_on_all_interfaces_in_local_mode(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    env = {**daemon_env(ws, free_port()), "SIGNET_BIND": "0.0.0.0"}
    done = subprocess.run([sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "refusing to listen on 0.0.0.0" in done.stderr and "auth.mode" in done.stderr


def test_the_daemon_writes_a_private_install_token_and_renews_a_bad_one(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    token_path = ws / ".daemon" / "token"
    daemon = daemons(ws, free_port())
    daemon.wait_healthy()
    assert token_path.stat().st_mode & 0o777 == 0o600
    assert (ws / ".secrets" / "auth.key").stat().st_mode & 0o777 == 0o600
    first = token_path.read_text().strip()
    assert httpx.get(f"{daemon.url}/api/status", headers=daemon.headers()).status_code == 200
    daemon.terminate()
    token_path.write_text("sgt1.garbage.token\n")
    again = daemons(ws, free_port())
    again.wait_healthy()
    renewed = token_path.read_text().strip()
    assert renewed not in (first, "sgt1.garbage.token")
    assert httpx.get(f"{again.url}/api/status", headers=again.headers()).status_code == 200


def test_a_websocket_handshake_gets_the_same_checks(serve) -> None:
    """uvicorn here has no WebSocket library, so the guards are driven as ASGI directly: a
    handshake without a token, or from a foreign host, is closed before the app sees it."""
    s = serve()
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    def handshake(headers: list[tuple[bytes, bytes]]) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        async def receive() -> dict[str, Any]:
            return {"type": "websocket.connect"}

        scope = {"type": "websocket", "path": "/ws", "headers": headers,
                 "server": ("127.0.0.1", 3850), "state": {}}
        guarded = HostGuard(Authenticate(app, authority=authority(s.app)), port=3850)
        anyio.run(guarded, scope, receive, send)
        return sent

    host = [(b"host", b"127.0.0.1:3850")]
    assert handshake(host) == [{"type": "websocket.close", "code": 1008, "reason": "unauthorized"}]
    bearer = [(b"authorization", b"Bearer " + issue(s.app, "readonly").encode())]
    assert handshake([(b"host", b"evil.example"), *bearer])[0]["reason"] == "host_not_allowed"
    assert reached == []
    assert handshake([*host, *bearer]) == [] and reached == ["/ws"]


def test_a_scoped_token_gets_no_session_context_from_the_hooks_or_mcp(serve) -> None:
    """The session-start context gathers pinned and important memories of every project: a
    token scoped to one project must not see it, through the hook routes or memory_context."""
    s = serve()
    s.app.remember("critical: the other project's launch code is 0000", project="q")
    scoped = issue(s.app, "admin", project="p")
    assert_error(httpx.post(f"{s.url}/api/hooks/session-start", json={}, headers=auth(scoped)),
                 403, "forbidden")
    (refused,) = run_mcp(f"{s.url}/mcp", scoped, [("memory_context", {})])
    assert refused.is_error and "launch code" not in refused.content[0].text
    open_context = s.client.post("/api/hooks/session-start", json={}).json()
    assert "launch code is 0000" in open_context["context"]
