"""The daemon's deferred write path with the bundled model: remember answers before the vector
exists, keyword recall finds the memory at once, and the embed worker (its own thread, woken
by the write) makes it findable by meaning without anyone asking."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from daemon_process import free_port, make_workspace

# The workers' idle poll is ten minutes here: only the write's own wake-up can get the embed
# worker to the new memory within the test's deadline.
AGENT_YAML = "embedding:\n  provider: local\nmemory:\n  pipelineV2:\n    workerPollMs: 600000\n"
TEXT = "the quarterly invoices are archived in the blue cabinet"
QUERY = "where are the quarterly invoices archived"


def _hit(http: httpx.Client, memory_id: str, mode: str) -> dict[str, Any] | None:
    reply = http.post("/api/memory/recall", json={"query": QUERY, "mode": mode, "limit": 10})
    assert reply.status_code == 200, reply.text
    return next((h for h in reply.json()["results"] if h["id"] == memory_id), None)


def test_a_deferred_write_is_found_lexically_then_by_meaning(
    tmp_path: Path, daemons, suite_store
) -> None:
    daemon = daemons(make_workspace(tmp_path / "ws", AGENT_YAML, suite_store), free_port())
    daemon.wait_healthy(60)
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=60) as http:
        reply = http.post("/api/memory/remember", json={"content": TEXT})
        assert reply.status_code == 200, reply.text
        memory_id = reply.json()["id"]
        assert reply.json()["embedded"] is False

        lexical = _hit(http, memory_id, "keyword")
        assert lexical is not None and lexical["evidence"]["lexical"] is not None

        deadline = time.monotonic() + 60  # a deadline against hanging, not a speed target
        while (semantic := _hit(http, memory_id, "vector")) is None:
            assert time.monotonic() < deadline, "the embed worker never embedded the write"
            time.sleep(0.05)
        assert semantic["evidence"]["semantic"] > 0.3
    assert daemon.terminate()[0] == 0
