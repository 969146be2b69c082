"""The MCP server, driven by the SDK's real client (`mcp.Client`) over both transports.

- stdio: `python -m signet mcp` as a subprocess, the way a harness spawns it; in-process when no
  daemon runs, and proxying to a real daemon (`signet daemon start --foreground`) when one does.
- streamable HTTP: `/mcp` on the daemon's FastAPI app (`create_app`, which mounts it), under
  uvicorn in a thread on a free loopback port.

Every transport runs the same round trip (`round_trip`), so they cannot drift apart. The last
test checks recall surface parity: one query through HTTP, MCP and the CLI gives the same ids in
the same order. Subprocess workspaces turn embeddings off (`provider: none`) for speed, and the
pipeline off, so no worker adds derived memories while a test compares results.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
import pytest

from auth_tokens import auth, install_token, mcp_http
from fakes.transcripts import claude_code
from mcp import Client, StdioServerParameters
from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.daemon.server import create_app
from signet.mcp.tools import WITHOUT_DAEMON
from signet.providers.hash_embedder import HashEmbedder
from uvicorn_thread import serve_in_thread

AGENT_YAML = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"
TOOLS = {
    "memory_search", "memory_store", "memory_get", "memory_list", "memory_modify",
    "memory_forget", "memory_feedback", "session_search", "memory_context",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Workspace:
    path: Path
    port: int
    store: StoreConfig

    @property
    def db(self) -> Path:
        return self.path / "memory" / "memories.db"

    def env(self) -> dict[str, str]:
        return {
            **os.environ, "SIGNET_WORKSPACE": str(self.path), "SIGNET_PORT": str(self.port),
            "SIGNET_BIND": "127.0.0.1", "HOME": str(self.path.parent), "OMP_NUM_THREADS": "1",
        }

    def headers(self) -> dict[str, str]:
        """The daemon's install token (written at its start), as the CLI sends it."""
        return auth((self.path / ".daemon" / "token").read_text("ascii").strip())

    def stdio(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable, args=["-m", "signet", "mcp"], env=self.env()
        )

    def cli_json(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "signet", "--json", *args], env=self.env(),
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture
def workspace(tmp_path: Path, suite_store: StoreConfig) -> Workspace:
    """A workspace whose port has nothing listening: the CLI and `signet mcp` run in-process.
    On the store of this pass (conftest.py `suite_store`): its agent.yaml names it."""
    path = tmp_path / "agents"
    path.mkdir()
    store = (f"store:\n  backend: postgres\n  url: {json.dumps(suite_store.url)}\n"
             if suite_store.backend == "postgres" else "")
    (path / "agent.yaml").write_text(AGENT_YAML + store, encoding="utf-8")
    return Workspace(path, free_port(), suite_store)


@pytest.fixture
def daemon(workspace: Workspace) -> Iterator[str]:
    """A real daemon on the workspace's port; yields its URL."""
    output = workspace.path.parent / "daemon.out"
    with output.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
            env=workspace.env(), stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{workspace.port}"
    try:
        _wait_healthy(url, proc, output)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], output: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the daemon exited: {output.read_text('utf-8', 'replace')}")
        try:
            if httpx.get(f"{url}/health", timeout=0.5).json().get("pid") == proc.pid:
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.05)
    pytest.fail(f"the daemon did not answer: {output.read_text('utf-8', 'replace')}")


@dataclass
class Served:
    app: SignetApp
    url: str
    token: str


@pytest.fixture
def served(tmp_path: Path, suite_store: StoreConfig) -> Iterator[Served]:
    """The daemon's FastAPI app (with /mcp mounted by create_app) under uvicorn in a thread,
    around a SignetApp with the deterministic hash embedder, so vectors take part in recall."""
    config = Config.default(tmp_path / "served").replace(store=suite_store)
    app = SignetApp.open(config, embedder=HashEmbedder(64))
    token = install_token(app.config, app)
    try:
        running = serve_in_thread(create_app(app))
    except BaseException:
        app.close()
        raise
    try:
        yield Served(app, running.url, token)
    finally:
        running.stop()
        app.close()


def with_client(server: StdioServerParameters | Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run `body` with a connected MCP client; its result."""

    async def main() -> Any:
        async with Client(server) as client:
            return await body(client)

    return anyio.run(main)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def call_fails(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return "\n".join(block.text for block in result.content if block.type == "text")


async def round_trip(client: Client) -> str:
    """Every tool, the way an agent uses them; returns the id of the memory it worked on."""
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS

    stored = await call(
        client, "memory_store", content="Priya prefers tabs over spaces in Go code",
        type="preference", tags=["style"], importance=0.8,
    )
    assert set(stored) == {"id", "deduped"} and stored["deduped"] is False
    memory_id = stored["id"]
    again = await call(client, "memory_store", content="Priya prefers tabs over spaces in Go code")
    assert again == {"id": memory_id, "deduped": True}
    other = (await call(client, "memory_store", content="The deploy runs every Friday at noon"))["id"]

    found = await call(client, "memory_search", query="tabs or spaces", limit=5)
    assert found["results"][0]["id"] == memory_id
    # Compact by default: what the agent needs to use the memory, nothing else (no fused
    # score: the order ranks; the confidence says how likely it answers).
    assert set(found["results"][0]) == {
        "id", "content", "confidence", "type", "tags", "created_at", "source"
    }
    raw = await client.call_tool("memory_search", {"query": "tabs or spaces", "limit": 5})
    text = raw.content[0].text  # type: ignore[union-attr]
    # One line of JSON, no indentation or padding: every character is the agent's context.
    assert text == json.dumps(raw.structured_content, separators=(",", ":"), ensure_ascii=False)
    # Served from a store `signet mcp` opened itself, every search answer says so.
    alone = WITHOUT_DAEMON in (client.instructions or "")
    assert set(found) == {"results", "query", "method", "count", *(["note"] if alone else [])}
    assert found.get("note") == (WITHOUT_DAEMON if alone else None)
    verbose = await call(client, "memory_search", query="tabs or spaces", limit=5, verbose=True)
    assert verbose["results"][0]["evidence"]["lexical"] is not None
    assert set(verbose["meta"]) >= {"count", "timings", "degraded"}
    found_alone, verbose_alone = ({k: v for k, v in a.items() if k != "note"} for a in (found, verbose))
    assert len(json.dumps(found_alone)) * 3 < len(json.dumps(verbose_alone))
    assert (await call(client, "memory_search", query="tabs", type="decision"))["results"] == []
    assert (await call(client, "memory_search", query="deploy", tags=["style"]))["results"] == []

    got = await call(client, "memory_get", id=memory_id)
    assert (got["type"], got["tags"], got["importance"]) == ("preference", ["style"], 0.8)
    page = await call(client, "memory_list", limit=1)
    assert (page["total"], page["limit"], len(page["items"])) == (2, 1, 1)
    assert set(page["items"][0]) == {"id", "content", "type", "tags", "created_at", "source"}
    assert "content_hash" in (await call(client, "memory_list", limit=1, verbose=True))["items"][0]
    assert (await call(client, "memory_list", type="preference"))["total"] == 1

    changed = await call(
        client, "memory_modify", id=memory_id, content="Priya prefers tabs over spaces everywhere",
        version=1, reason="she said so",
    )
    assert (changed["content"], changed["version"]) == ("Priya prefers tabs over spaces everywhere", 2)
    assert "version 2, not 1" in await call_fails(
        client, "memory_modify", id=memory_id, importance=0.1, version=1
    )

    noted = await call(
        client, "memory_feedback", memory_id=memory_id, feedback="correction",
        correction_text="Priya uses spaces in Python", session_id="s-1",
    )
    assert (noted["memory_id"], noted["feedback_type"], noted["session_id"]) == (
        memory_id, "correction", "s-1"
    )
    assert "correction_text" in await call_fails(
        client, "memory_feedback", memory_id=memory_id, feedback="correction"
    )

    context = await call(client, "memory_context", project="go-tools")
    assert memory_id in context["memories"] and "Priya prefers tabs" in context["context"]
    assert context["project"] == "go-tools" and 0 < context["tokens"] <= 2000

    forgotten = await call(client, "memory_forget", id=other, reason="obsolete")
    assert forgotten["is_deleted"] is True
    after = await call(client, "memory_search", query="deploy Friday")
    assert other not in [hit["id"] for hit in after["results"]]

    assert "memory no-such-id not found" in await call_fails(client, "memory_get", id="no-such-id")
    assert "not found" in await call_fails(client, "memory_forget", id="no-such-id")
    assert "not found" in await call_fails(client, "memory_feedback", memory_id="no-such-id")
    assert "invalid type" in await call_fails(client, "memory_store", content="x", type="bogus")
    return memory_id


def stored_rows(
    store: StoreConfig, db: Path, memory_id: str
) -> tuple[list[tuple[Any, ...]], set[str]]:
    """(agent_feedback rows, history actors) of one memory, read straight from the store."""
    feedback_sql = ("SELECT feedback_type, correction_text, session_id, actor FROM agent_feedback"
                    " WHERE memory_id = ?")
    actors_sql = "SELECT changed_by FROM memory_history WHERE memory_id = ?"
    if store.backend == "postgres":
        with psycopg.connect(store.url) as pg:
            feedback = pg.execute(feedback_sql.replace("?", "%s"), (memory_id,)).fetchall()
            actors = {r[0] for r in pg.execute(actors_sql.replace("?", "%s"), (memory_id,))}
        return [tuple(row) for row in feedback], actors
    with closing(sqlite3.connect(db)) as conn:
        feedback = conn.execute(feedback_sql, (memory_id,)).fetchall()
        actors = {row[0] for row in conn.execute(actors_sql, (memory_id,))}
    return feedback, actors


async def without_daemon(client: Client) -> str:
    """The round trip, on a server that must say it works without the daemon."""
    assert client.instructions is not None and WITHOUT_DAEMON in client.instructions
    return await round_trip(client)


async def through_daemon(client: Client) -> str:
    assert client.instructions is not None and WITHOUT_DAEMON not in client.instructions
    return await round_trip(client)


def test_stdio_round_trip_in_process(workspace: Workspace) -> None:
    memory_id = with_client(workspace.stdio(), without_daemon)
    feedback, actors = stored_rows(workspace.store, workspace.db, memory_id)
    assert feedback == [("correction", "Priya uses spaces in Python", "s-1", "mcp")]
    assert actors == {"mcp"}


def test_http_round_trip_at_the_daemons_mcp_path(served: Served) -> None:
    memory_id = with_client(mcp_http(f"{served.url}/mcp", served.token), round_trip)
    feedback, actors = stored_rows(served.app.config.store, served.app.config.db_path, memory_id)
    assert feedback == [("correction", "Priya uses spaces in Python", "s-1", "mcp")]
    assert actors == {"mcp"}
    # The daemon's own routes still answer beside /mcp, errors in the contract's shape.
    reply = httpx.get(f"{served.url}/no-such-route", headers=auth(served.token))
    assert reply.status_code == 404 and reply.json()["code"] == "not_found"


def test_feedback_route_records_and_refuses_in_the_contracts_shape(served: Served) -> None:
    memory_id = served.app.remember("Ken rotates the API keys monthly").id
    url = f"{served.url}/api/memory/feedback"
    headers = {"X-Signet-Actor": "hook", "X-Signet-Session": "sess-9", **auth(served.token)}
    made = httpx.post(url, json={"memory_id": memory_id, "feedback": "negative"}, headers=headers)
    assert made.status_code == 200
    assert {k: made.json()[k] for k in ("feedback_type", "actor", "session_id")} == {
        "feedback_type": "negative", "actor": "hook", "session_id": "sess-9",
    }
    for body, status, words in (
        ({"feedback": "positive"}, 400, "memory_id"),
        ({"memory_id": memory_id, "feedback": "meh"}, 400, "positive, negative, correction"),
        ({"memory_id": "no-such-id", "feedback": "positive"}, 404, "not found"),
    ):
        reply = httpx.post(url, json=body, headers=auth(served.token))
        assert reply.status_code == status and words in reply.json()["error"], reply.text
    feedback, _actors = stored_rows(served.app.config.store, served.app.config.db_path, memory_id)
    assert feedback == [("negative", None, "sess-9", "hook")]


def test_stdio_relays_to_a_running_daemon(workspace: Workspace, daemon: str) -> None:
    memory_id = with_client(workspace.stdio(), through_daemon)
    feedback, actors = stored_rows(workspace.store, workspace.db, memory_id)
    assert feedback == [("correction", "Priya uses spaces in Python", "s-1", "mcp")]
    assert actors == {"mcp"}
    # The messages went to the daemon's /mcp (signet/mcp/bridge.py): its access log has them.
    logs = subprocess.run(
        [sys.executable, "-m", "signet", "daemon", "logs", "-n", "500"], env=workspace.env(),
        capture_output=True, text=True, timeout=60,
    ).stdout
    assert logs.count('"path": "/mcp"') >= 20 or logs.count("/mcp") >= 20, logs[-2000:]


def test_the_relay_loads_no_mcp_sdk_and_no_app(workspace: Workspace, daemon: str) -> None:
    """`signet mcp` with the daemon running answers initialize from a process that imported
    neither the MCP SDK, nor the web stack, nor the store, nor (its settings cached, as the
    hooks keep them) the configuration (checked with -X importtime)."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    for _first_then_cached_settings in range(2):  # the first run caches what Config.load found
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "signet", "mcp"],
            input=(json.dumps(init) + "\n").encode(), env=workspace.env(), capture_output=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 0 and answer["result"]["serverInfo"]["name"] == "signet"
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:")}
    heavy = ("mcp", "fastapi", "starlette", "pydantic", "numpy", "httpx", "click", "yaml",
             "signet.app", "signet.store", "signet.config", "signet.mcp.tools")
    assert not [m for m in imported if m in heavy or any(m.startswith(h + ".") for h in heavy)]


def test_one_query_gives_the_same_ids_through_http_mcp_and_the_cli(
    workspace: Workspace, daemon: str
) -> None:
    contents = [
        "Priya reviews the Go services on Mondays",
        "Priya prefers tabs in Go code",
        "The Go services deploy from the main branch",
        "Omar maintains the Python tooling",
        "Lunch is at noon on Fridays",
    ]
    for text in contents:
        httpx.post(
            f"{daemon}/api/memory/remember", json={"content": text}, headers=workspace.headers()
        ).raise_for_status()
    query = "Go services Priya"

    over_http = httpx.post(
        f"{daemon}/api/memory/recall", json={"query": query, "limit": 10},
        headers=workspace.headers(),
    ).json()["results"]

    async def search(client: Client) -> Any:
        return (await call(client, "memory_search", query=query, limit=10))["results"]

    token = workspace.headers()["Authorization"].removeprefix("Bearer ")
    over_mcp_http = with_client(mcp_http(f"{daemon}/mcp", token), search)
    over_mcp_stdio = with_client(workspace.stdio(), search)
    over_cli = workspace.cli_json("recall", query, "--limit", "10")["results"]

    ids = [hit["id"] for hit in over_http]
    assert len(ids) >= 3  # enough hits for the order to mean something
    assert [hit["id"] for hit in over_mcp_http] == ids
    assert [hit["id"] for hit in over_mcp_stdio] == ids
    assert [hit["id"] for hit in over_cli] == ids


def test_expand_returns_the_transcript_excerpt_through_http_mcp_and_the_cli(
    workspace: Workspace, daemon: str
) -> None:
    turns = [
        ("user", "Good morning, let us plan the week."),
        ("assistant", "Sure, what is first?"),
        ("user", "My sister Ines is visiting Lisbon in May."),
        ("assistant", "Lovely, I will remember the Lisbon trip."),
    ]
    headers = workspace.headers()
    imported = httpx.post(
        f"{daemon}/api/sessions/sess-42/transcript", headers=headers,
        json={"harness": "claude-code", "content": claude_code(turns, session_id="ignored")},
    )
    assert imported.status_code == 201, imported.text
    httpx.post(
        f"{daemon}/api/memory/remember", json={"content": "Ines visits Lisbon in May"},
        headers={**headers, "X-Signet-Session": "sess-42"},
    ).raise_for_status()
    httpx.post(
        f"{daemon}/api/memory/remember", json={"content": "Lisbon has steep hills"}, headers=headers,
    ).raise_for_status()

    def excerpts(hits: list[dict[str, Any]]) -> dict[str, str | None]:
        return {hit["content"]: hit.get("transcript") for hit in hits}

    over_http = httpx.post(
        f"{daemon}/api/memory/recall", json={"query": "Lisbon", "expand": True}, headers=headers,
    ).json()["results"]

    async def search(client: Client) -> Any:
        found = await call(client, "memory_search", query="Lisbon", expand=True)
        sessions = await call(client, "session_search", query="sister Lisbon")
        return found["results"], sessions["items"]

    token = headers["Authorization"].removeprefix("Bearer ")
    over_mcp, sessions = with_client(mcp_http(f"{daemon}/mcp", token), search)
    over_cli = workspace.cli_json("recall", "Lisbon", "--expand")["results"]
    # The message that said it, with sessions.expand_messages (2) messages either side.
    expected = "\n".join(f"{'User' if r == 'user' else 'Assistant'}: {t}" for r, t in turns)
    for hits in (over_http, over_mcp, over_cli):
        got = excerpts(hits)
        assert got["Lisbon has steep hills"] is None  # not from a session: nothing to expand
        assert got["Ines visits Lisbon in May"] == expected
    assert [s["session_id"] for s in sessions] == ["sess-42"]
    assert "score" not in sessions[0] and sessions[0]["snippet"]  # the order ranks them
    without = workspace.cli_json("recall", "Lisbon")["results"]
    assert all("transcript" not in hit for hit in without)


def test_identity_files_are_resources_and_the_context_a_prompt(workspace: Workspace) -> None:
    (workspace.path / "USER.md").write_text("# User\n\nPriya, a Go developer in Lisbon.\n")

    async def body(client: Client) -> None:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {f"signet://identity/{n}" for n in ("AGENTS.md", "USER.md", "MEMORY.md")} <= listed
        read = await client.read_resource("signet://identity/USER.md")
        assert "Priya, a Go developer" in read.contents[0].text
        await call(client, "memory_store", content="Priya ships the CLI on Fridays", importance=0.9)
        prompt = await client.get_prompt("signet_context", {})
        text = prompt.messages[0].content.text
        assert "Priya, a Go developer" in text and "ships the CLI on Fridays" in text

    with_client(workspace.stdio(), body)
