"""min_confidence on every recall surface: HTTP recall and search, MCP memory_search (with the
agent floor by default) and `signet recall --min-confidence`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcp import Client
from signet.app import SignetApp
from signet.config import Config
from signet.mcp.backends import AppBackend
from signet.mcp.tools import build_server
from signet.recall.confidence import AGENT_MIN_CONFIDENCE

# One rare word of six matches one note: a weak match, which the agent floor leaves out.
NOISE = "kubernetes cluster autoscaling latency budget regression"
NOTES = ("The billing service is written in Go", "My cat is named Whiskers",
         "We moved the standup to Thursday", "kubernetes is on my reading list")


def test_http_recall_and_search_take_min_confidence(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    for text in NOTES:
        served.app.remember(text)
    body = {"query": "billing service written", "mode": "keyword"}
    everything = served.client.post("/api/memory/recall", json=body).json()["results"]
    assert everything and all(0 <= r["confidence"] <= 1 for r in everything)
    top = max(r["confidence"] for r in everything)
    kept = served.client.post("/api/memory/recall", json={**body, "min_confidence": top - 1e-3}).json()
    assert [r["confidence"] for r in kept["results"]] == [top]
    none = served.client.post("/api/memory/recall", json={**body, "min_confidence": 1.0})
    assert none.json()["results"] == []
    searched = served.client.get(
        "/api/memory/search", params={"q": "billing service", "mode": "keyword", "min_confidence": 1}
    )
    assert searched.status_code == 200 and searched.json()["results"] == []
    bad = served.client.post("/api/memory/recall", json={**body, "min_confidence": 1.5})
    assert bad.status_code in (400, 422) and "min_confidence" in bad.text


def mcp_search(app: SignetApp, **arguments: Any) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        async with Client(build_server(AppBackend(app))) as client:
            result = await client.call_tool("memory_search", arguments)
            assert not result.is_error, result.content
            return list((result.structured_content or {})["results"])

    return anyio.run(main)


def test_mcp_search_leaves_out_noise_by_default(tmp_path: Path) -> None:
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=None) as app:
        for text in NOTES:
            app.remember(text)
        weak = mcp_search(app, query=NOISE, mode="keyword", min_confidence=0)
        assert [r["content"] for r in weak] == ["kubernetes is on my reading list"]
        assert weak[0]["confidence"] < AGENT_MIN_CONFIDENCE
        assert mcp_search(app, query=NOISE, mode="keyword") == []
        found = mcp_search(app, query="what is my cat named Whiskers", mode="keyword")
        assert found and found[0]["content"] == "My cat is named Whiskers"
        assert all(r["confidence"] >= AGENT_MIN_CONFIDENCE for r in found)


def test_cli_recall_min_confidence(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text("embedding:\n  provider: none\n", encoding="utf-8")
    with SignetApp.open(Config.load(workspace, env={}), embedder=None) as app:
        for text in NOTES:
            app.remember(text)
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(tmp_path),
           "SIGNET_PORT": "1"}

    def recall(*args: str) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "signet", "--json", "recall", "billing service", *args],
            env=env, capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout)["results"])

    assert recall("--mode", "keyword")
    assert recall("--mode", "keyword", "--min-confidence", "1") == []
