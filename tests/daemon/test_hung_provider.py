"""A hung embedding provider (accepts, never answers) over a real daemon: recall answers from
the lexical channels after the query budget, stops calling the provider once the breaker
opens, tries it again after the cooldown, /api/status says the embedder is degraded, and routes
that need no embedding keep answering while recalls wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from auth_tokens import auth, install_token, issue
from fakes.embed_server import FakeEmbedServer
from signet.app import SignetApp
from signet.config import Config, EmbeddingConfig, SearchConfig, StoreConfig
from signet.daemon.server import create_app
from signet.daemon.startup import bind_socket, make_server

RECALL = "/api/memory/recall"


@pytest.fixture
def hung(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[httpx.Client, FakeEmbedServer, SignetApp]]:
    """On SQLite, or on the store of the `backend` parameter when the test takes it."""
    store = (request.getfixturevalue("backend_store") if "backend" in request.fixturenames
             else StoreConfig())
    with FakeEmbedServer(dimensions=16) as server:
        cfg = Config.default(tmp_path / "ws").replace(
            store=store,
            # The provider's own timeout is long: only the recall budget can cut the wait short.
            embedding=replace(EmbeddingConfig(), provider="ollama", model="m", dimensions=16,
                              base_url=server.url, timeout_ms=60_000),
            search=replace(SearchConfig(), query_embed_timeout_ms=300, embed_breaker_failures=2,
                           embed_breaker_cooldown_ms=1_500),
        )
        app = SignetApp.open(cfg)
        sock = bind_socket("127.0.0.1", 0)
        uvicorn = make_server(create_app(app))
        thread = threading.Thread(target=uvicorn.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not uvicorn.started:
            time.sleep(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with httpx.Client(base_url=url, timeout=20, headers=auth(install_token(cfg, app))) as client:
            yield client, server, app
            uvicorn.should_exit = True
            server.recover()
            thread.join(10)
        sock.close()
        app.close()


def recall(client: httpx.Client, query: str) -> dict[str, Any]:
    reply = client.post(RECALL, json={"query": query, "mode": "hybrid"})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_a_hung_embedder_degrades_recall_then_is_skipped_then_retried(hung) -> None:
    client, server, _app = hung
    client.post("/api/memory/remember", json={"content": "the boat is moored at pier nine"})
    assert recall(client, "boat pier")["method"] == "hybrid"  # the provider answers
    server.hang()
    for query in ("where is the boat", "which pier"):
        answer = recall(client, query)  # waits the budget (0.3 s), not the provider's 60 s
        assert answer["method"] == "hybrid-degraded" and answer["meta"]["degraded"] == ["semantic"]
        assert answer["results"][0]["content"] == "the boat is moored at pier nine"
    status = client.get("/api/status").json()
    assert status["degraded"] == ["embedder"]
    assert status["embedder"]["health"]["state"] == "open"
    asked = len(server.requests)
    skipped = recall(client, "boat moored")  # breaker open: the provider is not called at all
    assert skipped["meta"]["degraded"] == ["semantic"] and len(server.requests) == asked
    server.recover()
    time.sleep(1.6)  # the cooldown: one recall tries the provider again, and it answers
    assert recall(client, "boat nine")["method"] == "hybrid"
    assert client.get("/api/status").json()["degraded"] == []


def test_routes_without_embeddings_answer_while_recalls_wait_on_a_hung_embedder(hung) -> None:
    client, server, _app = hung
    client.post("/api/memory/remember", json={"content": "a note to list"})
    server.hang()
    results: list[int] = []

    def waiting_recall(n: int) -> None:
        results.append(client.post(RECALL, json={"query": f"note {n}"}).status_code)

    threads = [threading.Thread(target=waiting_recall, args=(n,)) for n in range(45)]  # more than the request thread pool (40)
    for thread in threads:
        thread.start()
    listed = client.get("/api/memories")
    for thread in threads:
        thread.join(30)
    assert listed.status_code == 200 and listed.json()["total"] == 1
    assert results == [200] * 45


def test_health_probes_of_a_hung_embedder_share_the_breaker_and_stall_nothing(
    hung, backend: str
) -> None:
    client, server, app = hung
    client.post("/api/memory/remember", json={"content": "a note to list"})
    readonly = httpx.Client(base_url=str(client.base_url), timeout=20,
                            headers=auth(issue(app, "readonly")))
    assert readonly.get("/api/embeddings/health").json()["ok"] is True  # the provider answers
    server.hang()
    asked = len(server.requests)
    answers: list[dict[str, Any]] = []

    def probe() -> None:
        reply = readonly.get("/api/embeddings/health")
        assert reply.status_code == 200, reply.text
        answers.append(reply.json())

    threads = [threading.Thread(target=probe) for _ in range(45)]  # more than the request pool (40)
    for thread in threads:
        thread.start()
    listed = readonly.get("/api/memories")  # would wait for a request thread the probes held
    for thread in threads:
        thread.join(30)
    assert listed.status_code == 200 and listed.json()["total"] == 1
    assert len(answers) == 45 and not any(a["ok"] for a in answers)
    assert {a["error"] for a in answers} <= {"provider_timeout", "provider_unavailable"}
    # One probe reached the hung provider; the rest waited for it or were refused by the
    # breaker, which recall shares: the status says the embedder is degraded.
    assert len(server.requests) == asked + 1
    assert client.get("/api/status").json()["degraded"] == ["embedder"]
    readonly.close()
