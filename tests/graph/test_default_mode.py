"""Traversal on by default: every surface that gets no mode from its caller asks recall for
`search.default_mode` ("full", every channel, the graph included); an explicit mode still wins;
and with an empty graph "full" ranks exactly as "hybrid"."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from graphs import DISTRACTORS, QUERY, build_car_and_shopping

from mcp import Client
from signet.app import SignetApp
from signet.config import Config, SearchConfig
from signet.mcp.backends import AppBackend
from signet.mcp.tools import build_server
from signet.types import RecallQuery

NO_EMBEDDINGS = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


@pytest.fixture
def app(app: SignetApp, backend: str) -> SignetApp:
    """The root conftest's app, on each backend in turn (SQLite, then PostgreSQL)."""
    return app


def ranked(app: SignetApp, text: str, mode: str) -> list[tuple[str, Any, Any, tuple[str, ...]]]:
    """The page, each score to within the decay that the clock moves between two calls."""
    response = app.recall(RecallQuery(text, limit=20, mode=mode, touch=False))  # type: ignore[arg-type]
    return [(h.memory.id, pytest.approx(h.score, rel=1e-6), h.evidence, h.adjustments)
            for h in response.hits]


def test_full_ranks_exactly_as_hybrid_when_the_graph_is_empty(app: SignetApp) -> None:
    for text in [*DISTRACTORS, "Ford Mustang air filter", "Target loyalty discounts"]:
        app.remember(text)
    assert app.graph.stats()["entities"] == 0
    for text in [QUERY, "filter", "weekly standup Thursday", "Mustang", "discounts on flights"]:
        full, hybrid = ranked(app, text, "full"), ranked(app, text, "hybrid")
        assert full == hybrid and full


def test_the_default_mode_is_full_so_traversal_evidence_comes_with_it(app: SignetApp) -> None:
    assert app.config.search.default_mode == "full"
    ids = build_car_and_shopping(app)

    def traversal(mode: str) -> float | None:
        hits = app.recall(RecallQuery(QUERY, mode=mode, touch=False)).hits  # type: ignore[arg-type]
        # Hybrid does not find the target at all (no word or context links it to the query).
        return next((h.evidence.traversal for h in hits if h.memory.id == ids["target"]), None)

    assert traversal(app.config.search.default_mode) is not None
    assert traversal("hybrid") is None


def recall_method(client: Any, **body: Any) -> tuple[str, dict[str, Any]]:
    reply = client.post("/api/memory/recall", json={"query": QUERY, **body})
    assert reply.status_code == 200, reply.text
    data = reply.json()
    return data["method"], {r["id"]: r["evidence"]["traversal"] for r in data["results"]}


def test_http_recall_and_search_use_the_configured_default_mode(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    ids = build_car_and_shopping(served.app)
    method, traversal = recall_method(served.client)
    assert method == "full" and traversal[ids["target"]] is not None
    assert recall_method(served.client, mode="hybrid")[0] == "hybrid"
    searched = served.client.get("/api/memory/search", params={"q": QUERY}).json()
    assert searched["method"] == "full"

    hybrid_default = serve(search=SearchConfig(default_mode="hybrid"))
    build_car_and_shopping(hybrid_default.app)
    method, traversal = recall_method(hybrid_default.client)
    assert method == "hybrid" and all(v is None for v in traversal.values())
    assert recall_method(hybrid_default.client, mode="full")[0] == "full"
    searched = hybrid_default.client.get("/api/memory/search", params={"q": QUERY}).json()
    assert searched["method"] == "hybrid"
    assert hybrid_default.client.get(
        "/api/memory/search", params={"q": QUERY, "mode": "keyword"}
    ).json()["method"] == "keyword"


def mcp_search(app: SignetApp, **arguments: Any) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with Client(build_server(AppBackend(app))) as client:
            result = await client.call_tool("memory_search", {"query": QUERY, **arguments})
            assert not result.is_error, result.content
            return dict(result.structured_content or {})

    return anyio.run(main)


def test_mcp_memory_search_uses_the_configured_default_mode(tmp_path: Path, app: SignetApp) -> None:
    build_car_and_shopping(app)
    assert mcp_search(app)["method"] == "full"
    assert mcp_search(app, mode="hybrid")["method"] == "hybrid"
    cfg = Config.default(tmp_path / "other")
    hybrid_cfg = cfg.replace(search=dataclasses.replace(cfg.search, default_mode="hybrid"))
    with SignetApp.open(hybrid_cfg, embedder=None) as other:
        assert mcp_search(other)["method"] == "hybrid"
        assert mcp_search(other, mode="keyword")["method"] == "keyword"


def cli_recall(workspace: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(workspace.parent),
           "SIGNET_PORT": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "--json", "recall", QUERY, *args], env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_cli_recall_uses_the_configured_default_mode(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS, encoding="utf-8")
    with SignetApp.open(Config.load(workspace, env={}), embedder=None) as app:
        ids = build_car_and_shopping(app)
    found = cli_recall(workspace)
    assert found["method"] == "full"
    assert ids["target"] in {r["id"] for r in found["results"]}
    assert cli_recall(workspace, "--mode", "hybrid")["method"] == "hybrid"
    (workspace / "agent.yaml").write_text(
        NO_EMBEDDINGS + "search:\n  default_mode: keyword\n", encoding="utf-8"
    )
    assert cli_recall(workspace)["method"] == "keyword"
