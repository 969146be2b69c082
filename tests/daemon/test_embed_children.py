"""The bundled model in the embed worker's child processes, through a real daemon: every
vector of a burst of writes is stored by them, a killed child's work is done by the next one,
and a restarted daemon answers /health before any model is loaded and a recall sent at once
waits for the model and finds the memories by meaning."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
from daemon_process import free_port, make_workspace

AGENT_YAML = "embedding:\n  provider: local\n  worker_processes: 2\n"
TOPICS = ["invoices", "bicycle repairs", "the garden", "tax returns", "a trip to Lisbon",
          "the kitchen tiles", "piano lessons", "the dentist"]
QUERY = "where did we put the paperwork about invoices"


def _embed_children(pid: int) -> list[int]:
    """The daemon's child processes serving the model (providers/embed_process.py)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            if b"embed_process" in cmdline:
                found.append(int(child))
    return found


def _audit(http: httpx.Client) -> dict[str, Any]:
    reply = http.get("/api/status")
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["embeddings"])


def _until(ok: Any, what: str, timeout_s: float = 90) -> Any:
    deadline = time.monotonic() + timeout_s  # a deadline against hanging, not a speed target
    while not (value := ok()):
        assert time.monotonic() < deadline, what
        time.sleep(0.1)
    return value


def _remember(http: httpx.Client, batch: int) -> None:
    for i, topic in enumerate(TOPICS * 3):
        reply = http.post("/api/memory/remember",
                          json={"content": f"note {batch}.{i}: the folder about {topic} is in"
                                           f" drawer {i} of cabinet {batch}"})
        assert reply.status_code == 200 and reply.json()["embedded"] is False, reply.text


def test_the_embed_processes_store_every_vector_and_a_killed_one_is_replaced(
    tmp_path: Path, daemons
) -> None:
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    daemon = daemons(workspace, free_port())
    daemon.wait_healthy(60)
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=60) as http:
        _remember(http, 1)
        _until(lambda: _audit(http)["missing"] == 0, "the first burst was never embedded")
        first = _embed_children(daemon.proc.pid)
        assert first, "the vectors were not made in a child process"

        for child in first:  # a crash: the jobs in flight fail and are retried
            os.kill(child, signal.SIGKILL)
        _remember(http, 2)
        audit = _until(lambda: (a := _audit(http))["missing"] == 0 and a, "never re-embedded")
        assert audit["memories"] == audit["embedded"] == 2 * 3 * len(TOPICS)
        again = _embed_children(daemon.proc.pid)
        assert again and not set(again) & set(first)
    assert daemon.terminate()[0] == 0
    assert not any(Path(f"/proc/{child}").exists() for child in again), "a child outlived it"

    # A restart: /health before the model, and a recall sent at once waits for it.
    daemon = daemons(workspace, free_port())
    _until(lambda: _health(daemon.url, daemon.proc.pid), "no /health", 60)
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=120) as http:
        status = http.get("/api/status").json()
        assert status["embedder"]["loaded"] is False
        reply = http.post("/api/memory/recall", json={"query": QUERY, "mode": "vector",
                                                       "limit": 5})
        assert reply.status_code == 200, reply.text
        assert any("invoices" in hit["content"] for hit in reply.json()["results"])
        assert http.get("/api/status").json()["embedder"]["loaded"] is True
    assert daemon.terminate()[0] == 0


def _health(url: str, pid: int) -> bool:
    try:
        reply = httpx.get(f"{url}/health", timeout=0.5)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200 and reply.json()["pid"] == pid
