"""The knowledge graph over HTTP (/api/knowledge/*) and from the shell (`signet graph`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from graphs import QUERY, build_car_and_shopping

from signet.app import SignetApp
from signet.config import Config, StoreConfig


def test_knowledge_routes_list_show_pin_and_count(serve: Callable[..., Any], backend: str) -> None:
    served = serve()
    client = served.client
    ids = build_car_and_shopping(served.app)
    listed = client.get("/api/knowledge/entities").json()
    assert listed["total"] == 2 and {e["name"] for e in listed["items"]} == {"Ford Mustang", "User"}
    user = client.get("/api/knowledge/entities", params={"q": "user"}).json()["items"][0]
    detail = client.get(f"/api/knowledge/entities/{user['id']}").json()
    assert {a["name"] for a in detail["aspects"]} == {"vehicles", "shopping"}
    shopping = next(a for a in detail["aspects"] if a["name"] == "shopping")
    assert shopping["attributes"][0]["source_memory_id"] == ids["target"]
    assert detail["dependencies"][0]["direction"] == "in"
    assert {m["id"] for m in detail["memories"]} == {ids["car"], ids["target"]}

    pinned = client.post(f"/api/knowledge/entities/{user['id']}/pin", json={"weight": 2}).json()
    assert pinned["pinned"] == "pin" and pinned["pin_weight"] == 2
    suppressed = client.post(f"/api/knowledge/entities/{user['id']}/pin", json={"suppress": True})
    assert suppressed.json()["pinned"] == "suppress"
    stats = client.get("/api/knowledge/stats").json()
    assert stats["suppressed"] == 1 and stats["aspects"] == 2 and stats["dependencies"] == 1
    assert client.delete(f"/api/knowledge/entities/{user['id']}/pin").json()["pinned"] is None

    assert client.get("/api/knowledge/entities/nope").status_code == 404
    assert client.post("/api/knowledge/entities/nope/pin").status_code == 404
    assert client.post(
        f"/api/knowledge/entities/{user['id']}/pin", json={"weight": 0}
    ).status_code == 400
    assert client.get("/api/knowledge/entities", params={"limit": 0}).status_code == 400


def test_communities_and_apply_over_http(serve: Callable[..., Any], backend: str) -> None:
    client = serve().client
    deps = [{"source": a, "target": b, "type": "uses", "strength": 0.9}
            for a, b in [("A", "B"), ("B", "C"), ("A", "C"), ("X", "Y"), ("Y", "Z"), ("X", "Z")]]
    applied = client.post("/api/knowledge/apply", json={"graph": {"dependencies": deps}})
    assert applied.status_code == 200 and applied.json()["dependencies"] == 6
    assert client.get("/api/knowledge/communities").json() == {"communities": []}
    found = client.post("/api/knowledge/communities/detect").json()["communities"]
    assert sorted(c["size"] for c in found) == [3, 3] and found[0]["quality"] == "strong"
    assert len(client.get("/api/knowledge/communities").json()["communities"]) == 2
    bad = client.post("/api/knowledge/apply", json={"graph": {"dependencies": [{"source": "A"}]}})
    assert bad.status_code == 400


def test_recall_over_http_in_full_mode_reports_traversal_evidence(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    ids = build_car_and_shopping(served.app)
    body = served.client.post(
        "/api/memory/recall", json={"query": QUERY, "mode": "full", "limit": 10}
    ).json()
    evidence = {r["id"]: r["evidence"]["traversal"] for r in body["results"]}
    assert evidence.get(ids["target"]) is not None
    assert (body["method"], body["meta"]["degraded"]) == ("full", [])


def signet(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(workspace.parent),
           "SIGNET_PORT": "1", "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_signet_graph_commands(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    workspace = tmp_path / "ws"
    config = Config.default(workspace)
    if backend == "postgres":  # the CLI's in-process app on the shared store, as agent.yaml says
        url = request.getfixturevalue("pg_url")
        config = config.replace(store=StoreConfig(backend="postgres", url=url))
        workspace.mkdir()
        (workspace / "agent.yaml").write_text(
            f"store:\n  backend: postgres\n  url: {json.dumps(url)}\n")
    with SignetApp.open(config, embedder=None) as app:
        build_car_and_shopping(app)
        app.apply_graph({"dependencies": [{"source": "User", "target": "Target", "type": "shops_at",
                                           "strength": 0.8}]})
    listed = signet(workspace, "graph", "entities")
    assert listed.returncode == 0, listed.stderr
    assert "Ford Mustang" in listed.stdout and "3 of 3 entities" in listed.stdout
    shown = signet(workspace, "--json", "graph", "entity", "my car")
    assert json.loads(shown.stdout)["name"] == "Ford Mustang"
    assert "aspect shopping" in signet(workspace, "graph", "entity", "USER").stdout
    pinned = signet(workspace, "graph", "pin", "user", "--suppress")
    assert pinned.returncode == 0 and "suppress" in pinned.stdout
    assert "not pinned" in signet(workspace, "graph", "pin", "user", "--remove").stdout
    detected = json.loads(signet(workspace, "--json", "graph", "communities", "--detect").stdout)
    assert sum(c["size"] for c in detected["communities"]) == 3
    missing = signet(workspace, "graph", "entity", "nobody")
    assert missing.returncode == 1 and "no entity" in missing.stderr
