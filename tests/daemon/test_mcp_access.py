"""Every MCP method at /mcp passes the calling token's permission and scope check
(docs/security.md "MCP"), over a real daemon and the SDK's real client.

Tools, prompts, resources, resource templates, completions, subscriptions and anything
registered later: a method or name missing from the guard's table is refused to every token but
an unscoped admin. A scoped caller gets its own scope's answer or a refusal, and the list
methods show only what the caller may use. The world: project beta holds a pinned, important
memory and MEMORY.md (rendered from every project) names beta's plan; no scoped token, of any
kind, may see either through any method.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from mcp.shared.exceptions import MCPError

from auth_tokens import auth, issue, mcp_http
from mcp import Client
from signet.daemon.mcp_access import TOOLS

BETA_MEMORY = "critical: beta's launch code is 7781"
BETA_HEAD = "beta roadmap: acquire zeta corp"
USER_NOTE = "Priya, a Go developer in Lisbon"
IDENTITY = {f"signet://identity/{n}" for n in ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md")}
MEMORY_MD = "signet://identity/MEMORY.md"

# Every kind of scoped token: (role, token fields).
SCOPED: dict[str, dict[str, Any]] = {
    "read-only": {"role": "readonly", "project": "alpha"},
    "remember-only": {"role": "agent", "permissions": ["remember"], "project": "alpha"},
    "agent-scoped": {"role": "agent", "agent": "a"},
    "project-scoped": {"role": "agent", "project": "alpha"},
    "project-scoped admin": {"role": "admin", "project": "alpha"},
    "agent and project operator": {"role": "operator", "agent": "a", "project": "alpha"},
}


def scoped_tokens(s: Any) -> dict[str, str]:
    return {kind: issue(s.app, **fields) for kind, fields in SCOPED.items()}


def plant(s: Any) -> None:
    s.app.remember(BETA_MEMORY, project="beta", importance=0.95)
    s.app.remember("alpha ships on fridays", project="alpha", importance=0.9)
    (s.cfg.workspace / "MEMORY.md").write_text(f"# Memory\n\n{BETA_HEAD}\n", encoding="utf-8")
    (s.cfg.workspace / "USER.md").write_text(f"# User\n\n{USER_NOTE}\n", encoding="utf-8")


def with_client(url: str, token: str, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(mcp_http(f"{url}/mcp", token)) as client:
            return await body(client)

    return anyio.run(main)


async def outcome(call: Awaitable[Any]) -> tuple[str, str]:
    """("ok", what came back) or ("refused", the error's message)."""
    try:
        result = await call
    except MCPError as exc:
        return "refused", exc.error.message
    if getattr(result, "is_error", False):
        return "refused", " ".join(b.text for b in result.content if b.type == "text")
    return "ok", result.model_dump_json()


async def survey(client: Client) -> dict[str, Any]:
    """Everything a client can ask about prompts, resources and tools, with beta in mind."""
    return {
        "tools": {t.name for t in (await client.list_tools()).tools},
        "prompts": {p.name for p in (await client.list_prompts()).prompts},
        "resources": {str(r.uri) for r in (await client.list_resources()).resources},
        "templates": [t.uri_template for t in
                      (await client.list_resource_templates()).resource_templates],
        "prompt": await outcome(client.get_prompt("signet_context", {"project": "beta"})),
        "prompt_default": await outcome(client.get_prompt("signet_context", {})),
        "memory_md": await outcome(client.read_resource(MEMORY_MD)),
        "user_md": await outcome(client.read_resource("signet://identity/USER.md")),
        "context_tool": await outcome(client.call_tool("memory_context", {"project": "beta"})),
    }


def test_no_scoped_token_reads_another_scope_through_prompts_or_resources(serve) -> None:
    s = serve()
    plant(s)
    for kind, token in scoped_tokens(s).items():
        seen = with_client(s.url, token, survey)
        everything = json.dumps(seen, default=str)
        assert "7781" not in everything and "zeta corp" not in everything, kind
        for key in ("prompt", "prompt_default", "memory_md", "context_tool"):
            assert seen[key][0] == "refused", (kind, key, seen[key])
            assert "forbidden" in seen[key][1], (kind, key, seen[key])
        # The lists show only what this token may use: no cross-project prompt or file.
        assert seen["prompts"] == set() and seen["templates"] == [], kind
        if kind == "remember-only":
            assert seen["resources"] == set() and seen["user_md"][0] == "refused"
            assert seen["tools"] == {"memory_store", "memory_feedback"}
        else:  # its own view of the files HTTP gives a scoped token
            assert seen["resources"] == IDENTITY, kind
            assert seen["user_md"][0] == "ok" and USER_NOTE in seen["user_md"][1], kind
            assert "memory_context" not in seen["tools"] and "memory_search" in seen["tools"]


def test_an_unscoped_token_gets_what_its_permissions_allow(serve) -> None:
    s = serve()
    plant(s)
    owner = with_client(s.url, s.token, survey)  # the install token: admin, unscoped
    assert owner["tools"] == set(TOOLS) and owner["prompts"] == {"signet_context"}
    assert owner["resources"] == IDENTITY | {MEMORY_MD}
    assert owner["prompt"][0] == "ok" and "7781" in owner["prompt"][1]
    assert BETA_HEAD in owner["prompt_default"][1] and BETA_HEAD in owner["memory_md"][1]
    reader = with_client(s.url, issue(s.app, "readonly"), survey)  # recall over every project
    assert reader["prompt"][0] == "ok" and reader["memory_md"][0] == "ok"
    writer = with_client(s.url, issue(s.app, "agent", permissions=["remember"]), survey)
    assert "7781" not in json.dumps(writer, default=str)
    assert writer["prompt"][0] == writer["memory_md"][0] == writer["user_md"][0] == "refused"
    assert "recall" in writer["prompt"][1]
    assert writer["prompts"] == set() and writer["resources"] == set()


def test_what_the_guard_does_not_know_is_refused_to_all_but_an_unscoped_admin(serve) -> None:
    """A tool, prompt and resource registered after the table was written, and methods the
    daemon serves no table entry for (completions, subscriptions, logging, a made-up one)."""
    s = serve()
    server = s.api.state.mcp
    server.add_tool(lambda: "beta's hidden tool ran", name="extra_tool")
    server.prompt(name="extra_prompt")(lambda: "beta's hidden prompt")
    server.resource("signet://extra/notes", name="extra")(lambda: "beta's hidden notes")

    async def probe(client: Client) -> dict[str, Any]:
        return {
            "listed": {t.name for t in (await client.list_tools()).tools}
            | {p.name for p in (await client.list_prompts()).prompts}
            | {str(r.uri) for r in (await client.list_resources()).resources},
            "tool": await outcome(client.call_tool("extra_tool", {})),
            "prompt": await outcome(client.get_prompt("extra_prompt", {})),
            "resource": await outcome(client.read_resource("signet://extra/notes")),
        }

    for role, fields in (("admin", {"project": "alpha"}), ("operator", {})):
        seen = with_client(s.url, issue(s.app, role, **fields), probe)
        assert "hidden" not in json.dumps(seen, default=str), role
        assert not {"extra_tool", "extra_prompt", "signet://extra/notes"} & seen["listed"]
        assert all(seen[k][0] == "refused" for k in ("tool", "prompt", "resource")), seen
        for method, params in (
            ("completion/complete", {"ref": {"type": "ref/prompt", "name": "signet_context"},
                                     "argument": {"name": "project", "value": "b"}}),
            ("resources/subscribe", {"uri": MEMORY_MD}),
            ("subscriptions/listen", {"filter": {}}),
            ("logging/setLevel", {"level": "debug"}),
            ("signet/anything", {}),
        ):
            error = raw_call(s.url, issue(s.app, role, **fields), method, params)["error"]
            assert "forbidden" in error["message"], (role, method, error)
    owner = with_client(s.url, s.token, probe)
    assert {"extra_tool", "extra_prompt", "signet://extra/notes"} <= owner["listed"]
    assert all(owner[k][0] == "ok" and "hidden" in owner[k][1]
               for k in ("tool", "prompt", "resource"))


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}


def message(reply: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a reply, sent as JSON or as one server-sent event."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in reply.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(reply.json())


MODERN = "2026-07-28"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def modern_call(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One self-contained request of the sessionless protocol revision (no handshake)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {**auth(token), "Accept": "application/json, text/event-stream",
               "Mcp-Protocol-Version": MODERN, "Mcp-Method": method}
    if method in NAMED:
        headers["Mcp-Name"] = params[NAMED[method]]
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}
    return message(httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=10))


def raw_call(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request in a fresh session, as a hand-written client sends it."""
    headers = {**auth(token), **ACCEPT}
    opened = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=headers, timeout=10)
    assert opened.status_code == 200, opened.text
    headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
               headers=headers, timeout=10)
    reply = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": method,
                                           "params": params}, headers=headers, timeout=10)
    return message(reply)


def test_a_raw_client_gets_the_same_refusals(serve) -> None:
    """A client that skips the SDK (no listing first, odd arguments) is refused alike."""
    s = serve()
    plant(s)
    token = scoped_tokens(s)["project-scoped admin"]
    for method, params in (
        ("prompts/get", {"name": "signet_context", "arguments": {"project": "beta"}}),
        ("resources/read", {"uri": MEMORY_MD}),
        ("resources/read", {"uri": "signet://identity/../MEMORY.md"}),
        ("resources/read", {"uri": "SIGNET://identity/MEMORY.md"}),
        ("tools/call", {"name": "memory_context", "arguments": {"project": "beta"}}),
    ):
        for call in (raw_call, modern_call):  # in a session, and the sessionless revision
            reply = call(s.url, token, method, params)
            assert "7781" not in json.dumps(reply) and "zeta" not in json.dumps(reply), method
            assert "error" in reply or reply["result"].get("isError"), (method, reply)
            assert "forbidden" in json.dumps(reply), (call.__name__, method, reply)
    # The sessionless revision answers a permitted read: the refusals above are the guard's.
    listed = modern_call(s.url, token, "resources/list", {})
    assert {r["uri"] for r in listed["result"]["resources"]} == IDENTITY


def test_the_daemons_mcp_server_built_on_first_use_is_guarded_too(
    tmp_path, daemons, backend: str, backend_store
) -> None:
    """The daemon process builds its MCP server on the first /mcp request, not as `serve`
    does at once: the same refusals and session owners there, on both stores."""
    import subprocess
    import sys

    from daemon_process import daemon_env, free_port, make_workspace

    ws = make_workspace(tmp_path / "ws", store=backend_store)
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_serving(60)
    created = subprocess.run(
        [sys.executable, "-m", "signet", "--json", "token", "create", "--role", "admin",
         "--project", "alpha"], env=daemon_env(ws, port), capture_output=True, text=True,
        timeout=120)
    assert created.returncode == 0, created.stderr
    scoped = json.loads(created.stdout)["token"]
    admin = daemon.headers()["Authorization"].removeprefix("Bearer ")
    planted = httpx.post(f"{daemon.url}/api/memory/remember", headers=daemon.headers(), json={
        "content": BETA_MEMORY, "project": "beta", "pinned": True}, timeout=30)
    assert planted.status_code == 200, planted.text
    (ws / "MEMORY.md").write_text(f"# Memory\n\n{BETA_HEAD}\n", encoding="utf-8")
    for method, params in (
        ("prompts/get", {"name": "signet_context", "arguments": {"project": "beta"}}),
        ("resources/read", {"uri": MEMORY_MD}),
        ("tools/call", {"name": "memory_context", "arguments": {"project": "beta"}}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "signet_context"},
                                 "argument": {"name": "project", "value": "b"}}),
    ):
        reply = raw_call(daemon.url, scoped, method, params)
        assert "7781" not in json.dumps(reply) and "zeta" not in json.dumps(reply), method
        assert "forbidden" in json.dumps(reply), (method, reply)
    # The owner's answer shows what was refused is there.
    owner = raw_call(daemon.url, admin, "resources/read", {"uri": MEMORY_MD})
    assert "zeta" in json.dumps(owner)
    # A session the scoped token opened answers another token as an unknown one.
    headers = {**auth(scoped), **ACCEPT}
    opened = httpx.post(f"{daemon.url}/mcp", json=INITIALIZE, headers=headers, timeout=10)
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    for other in (auth(admin), auth(scoped) | {"Mcp-Session-Id": "0" * 32}):
        reply = httpx.post(f"{daemon.url}/mcp", json=ping, timeout=10,
                           headers={**ACCEPT, **session, **other})
        assert reply.status_code == 404, (other, reply.text)
    assert daemon.terminate()[0] == 0
