"""`remember`'s answer is no membership oracle: vectors are stored once per content hash, shared
by every scope, and `embedded` / `embedding_model` used to say whether *any* scope held (or had
held) the exact text. Through a real daemon (a subprocess with its embed worker, the deferred
write path, a loopback embedding server; SQLite and PostgreSQL) with two project-scoped tokens: a guess of the other
project's sentence is answered exactly as a sentence nobody holds, and the row says the same,
also while the provider fails (the embed worker asks it for every job, stored vector or not)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_process import daemon_env, free_port, make_workspace, store_rows

from fakes.embed_server import FakeEmbedServer, Fault

EMBEDDING = "embedding:\n  provider: ollama\n  model: m\n  dimensions: 16\n  base_url: {url}\n"
SECRET = "the merger with Initech closes on the third of March"


def token(ws: Path, port: int, project: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "signet", "--json", "token", "create", "--role", "agent",
         "--project", project], env=daemon_env(ws, port), capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return {"Authorization": f"Bearer {json.loads(done.stdout)['token']}"}


def attempted(ws: Path, store: Any, memory_id: str, timeout_s: float = 60) -> None:
    """Wait until the embed worker has been through the memory's job once (done or failed)."""
    deadline = time.monotonic() + timeout_s  # against hanging, not a speed target
    while not store_rows(ws, store, "SELECT count(*) FROM memory_jobs WHERE job_type = 'embed'"
                         f" AND memory_id = '{memory_id}' AND (status = 'completed'"
                         " OR attempts > 0 AND status <> 'leased')")[0][0]:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def answer(reply: dict[str, Any]) -> dict[str, Any]:
    """What a remember answer says about the vector."""
    return {"deduped": reply["deduped"], "embedded": reply["embedded"],
            "embedding_model": reply["memory"]["embedding_model"]}


def settled(ws: Path, store: Any, vectors: int, timeout_s: float = 60) -> None:
    """Wait until the embed worker has stored `vectors` vectors and has no job left."""
    deadline = time.monotonic() + timeout_s  # against hanging, not a speed target
    while True:
        stored = store_rows(ws, store, "SELECT count(*) FROM embeddings")[0][0]
        waiting = store_rows(ws, store, "SELECT count(*) FROM memory_jobs WHERE job_type ="
                             " 'embed' AND status IN ('pending', 'leased')")[0][0]
        if stored == vectors and waiting == 0:
            return
        assert time.monotonic() < deadline, (stored, waiting)
        time.sleep(0.05)


def test_remember_answers_a_guess_of_another_projects_text_as_a_fresh_one(
    tmp_path: Path, daemons, backend: str, backend_store, request: pytest.FixtureRequest
) -> None:
    embedder = FakeEmbedServer(dimensions=16).__enter__()
    request.addfinalizer(lambda: embedder.__exit__(None, None, None))
    ws = make_workspace(tmp_path / "ws", EMBEDDING.format(url=embedder.url), backend_store)
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy(60)
    alpha, beta = token(ws, port, "alpha"), token(ws, port, "beta")
    with httpx.Client(base_url=daemon.url, timeout=30) as http:

        def remember(headers: dict[str, str], content: str) -> dict[str, Any]:
            reply = http.post("/api/memory/remember", headers=headers, json={"content": content})
            assert reply.status_code == 200, reply.text
            return dict(reply.json())

        remember(beta, SECRET)
        settled(ws, backend_store, vectors=1)  # beta's text has its vector now
        control = remember(alpha, "a sentence that no project holds")
        guess = remember(alpha, SECRET)
        assert answer(guess) == answer(control) == {
            "deduped": False, "embedded": False, "embedding_model": None}
        # Its own vector, once the worker has been through alpha's jobs, is alpha's to know.
        settled(ws, backend_store, vectors=2)
        stored = http.get(f"/api/memory/{guess['id']}", headers=alpha).json()
        assert stored["embedding_model"] == "m"
        again = remember(alpha, SECRET)
        assert again["id"] == guess["id"] and again["deduped"] is True and again["embedded"]
    assert daemon.terminate()[0] == 0


def test_a_guess_is_not_embedded_while_the_provider_fails(
    tmp_path: Path, daemons, backend: str, backend_store, request: pytest.FixtureRequest
) -> None:
    """While the provider fails, a guess of another project's sentence stays without a vector
    exactly like a sentence nobody holds: the worker used to skip the provider for a text
    whose vector was stored, so the guess alone got one."""
    embedder = FakeEmbedServer(dimensions=16).__enter__()
    request.addfinalizer(lambda: embedder.__exit__(None, None, None))
    ws = make_workspace(tmp_path / "ws", EMBEDDING.format(url=embedder.url), backend_store)
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy(60)
    alpha, beta = token(ws, port, "alpha"), token(ws, port, "beta")
    with httpx.Client(base_url=daemon.url, timeout=30) as http:

        def remember(headers: dict[str, str], content: str) -> str:
            reply = http.post("/api/memory/remember", headers=headers, json={"content": content})
            assert reply.status_code == 200, reply.text
            return str(reply.json()["id"])

        remember(beta, SECRET)
        settled(ws, backend_store, vectors=1)
        embedder.push(*[Fault(status=500)] * 50)  # the provider fails from now on
        seen = {}
        for content in (SECRET, "a sentence that no project holds"):
            memory_id = remember(alpha, content)
            attempted(ws, backend_store, memory_id)  # one at a time: no batch mixes them
            seen[content] = http.get(f"/api/memory/{memory_id}", headers=alpha).json()
        assert [m["embedding_model"] for m in seen.values()] == [None, None], seen
    assert daemon.terminate()[0] == 0
