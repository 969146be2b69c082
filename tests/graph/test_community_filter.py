"""Community-scoped recall: `filters.community` (an id, or a name naming one community) keeps
the memories that mention an entity of that community, in every channel, through the app, HTTP,
MCP and the CLI; an unknown or ambiguous name is refused naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp import Client
from signet.app import SignetApp
from signet.config import Config
from signet.errors import InvalidInput, NotFound
from signet.mcp.backends import AppBackend
from signet.mcp.tools import build_server
from signet.types import Actor, MemoryFilters, RecallQuery

QUESTION = "planning note budget"


@pytest.fixture
def app(app: SignetApp, backend: str) -> SignetApp:
    """The root conftest's app, on each backend in turn (SQLite, then PostgreSQL)."""
    return app


def planted(app: SignetApp, actor: Actor = Actor()) -> dict[str, set[str]]:
    """Two planted communities (Left0-5, Right0-5), a memory about each entity, one about none;
    returns memory ids per community label ("left", "right", "none")."""
    left = [f"Left{i}" for i in range(6)]
    right = [f"Right{i}" for i in range(6)]
    deps = [{"source": a, "target": b, "type": "uses", "strength": 0.9}
            for group in (left, right) for i, a in enumerate(group) for b in group[i + 1:]]
    deps.append({"source": "Left0", "target": "Right0", "type": "uses", "strength": 0.1})
    app.apply_graph({"dependencies": deps}, actor=actor)
    ids: dict[str, set[str]] = {"left": set(), "right": set(), "none": set()}
    for side, names in (("left", left), ("right", right)):
        for name in names:
            ids[side].add(app.remember(
                f"{QUESTION} {name} {side}", graph={"entities": [name]}, actor=actor,
                agent_id=actor.agent_id,
            ).id)
    ids["none"].add(app.remember(f"{QUESTION} for nobody", actor=actor, agent_id=actor.agent_id).id)
    app.graph.detect_communities(actor.agent_id)
    return ids


def community_of(app: SignetApp, member: str) -> dict[str, Any]:
    return next(c for c in app.graph.communities()
                if member in {app.graph.entity(m)["canonical_name"] for m in c["member_ids"]})


def recalled(app: SignetApp, community: str, mode: str = "full", **filters: Any) -> set[str]:
    query = RecallQuery(QUESTION, limit=50, mode=mode, touch=False,  # type: ignore[arg-type]
                        filters=MemoryFilters(community=community, **filters))
    return {h.memory.id for h in app.recall(query).hits}


def test_recall_in_a_community_returns_only_its_members_memories(app: SignetApp) -> None:
    ids = planted(app)
    everything = {h.memory.id for h in app.recall(
        RecallQuery(QUESTION, limit=50, mode="full", touch=False)).hits}
    assert everything == ids["left"] | ids["right"] | ids["none"]
    left, right = community_of(app, "left1"), community_of(app, "right1")
    for mode in ("full", "hybrid", "keyword", "vector"):
        assert recalled(app, left["id"], mode) == ids["left"], mode
        assert recalled(app, right["id"], mode) == ids["right"], mode
    assert recalled(app, left["label"].upper()) == ids["left"]  # a name, any case
    page = app.list(MemoryFilters(community=right["id"]), limit=100)
    assert {m.id for m in page.items} == ids["right"] and page.total == 6


def test_an_unknown_or_ambiguous_community_is_refused_naming_it(app: SignetApp) -> None:
    planted(app)
    with pytest.raises(NotFound, match="'Nowhere'"):
        recalled(app, "Nowhere")
    label = community_of(app, "left1")["label"]
    planted(app, Actor(name="other", type="agent", agent_id="other"))
    with pytest.raises(InvalidInput, match=f"{label!r} is ambiguous"):
        recalled(app, label)
    # Within one agent the name is one community again.
    assert len(recalled(app, label, agent_id="default")) == 6


def test_community_filter_over_http_recall_and_search(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    ids = planted(served.app)
    left = community_of(served.app, "left1")

    def posted(community: str) -> Any:
        return served.client.post("/api/memory/recall", json={
            "query": QUESTION, "limit": 50, "filters": {"community": community},
        })

    for ref in (left["id"], left["label"]):
        reply = posted(ref)
        assert reply.status_code == 200, reply.text
        assert {r["id"] for r in reply.json()["results"]} == ids["left"]
    searched = served.client.get(
        "/api/memory/search", params={"q": QUESTION, "limit": 50, "community": left["id"]}
    ).json()
    assert {r["id"] for r in searched["results"]} == ids["left"]
    listed = served.client.get("/api/memories", params={"community": left["label"], "limit": 100})
    assert listed.status_code == 200, listed.text
    assert {m["id"] for m in listed.json()["items"]} == ids["left"]
    missing = posted("Nowhere")
    assert missing.status_code == 404 and "'Nowhere'" in missing.json()["error"]


def test_community_filter_in_mcp_memory_search(app: SignetApp) -> None:
    ids = planted(app)
    right = community_of(app, "right1")

    async def main() -> Any:
        async with Client(build_server(AppBackend(app))) as client:
            found = await client.call_tool(
                "memory_search", {"query": QUESTION, "limit": 50, "community": right["label"]}
            )
            unknown = await client.call_tool(
                "memory_search", {"query": QUESTION, "community": "Nowhere"}
            )
            return found, unknown

    found, unknown = anyio.run(main)
    assert {r["id"] for r in found.structured_content["results"]} == ids["right"]
    assert unknown.is_error and "'Nowhere'" in unknown.content[0].text


def test_cli_recall_community_option(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(
        "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n",
        encoding="utf-8",
    )
    with SignetApp.open(Config.load(workspace, env={}), embedder=None) as app:
        ids = planted(app)
        left = community_of(app, "left1")
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(tmp_path),
           "SIGNET_PORT": "1", "OMP_NUM_THREADS": "1"}

    def signet(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    done = signet("--json", "recall", QUESTION, "--limit", "50", "--community", left["label"])
    assert done.returncode == 0, done.stderr
    assert {r["id"] for r in json.loads(done.stdout)["results"]} == ids["left"]
    missing = signet("recall", QUESTION, "--community", "Nowhere")
    assert missing.returncode == 1 and "'Nowhere'" in missing.stderr
