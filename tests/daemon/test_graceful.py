"""Operation under a slow LLM and under load, against the real daemon process.

- A slow LLM (the fake server holds every reply for a minute) never blocks the event loop:
  while an extraction waits on it, /health and remember still answer at once.
- SIGTERM with jobs in flight is graceful: the daemon stops leasing, gives the running tick a
  few seconds, hands every leased job back to pending with its attempt, checkpoints and exits 0;
  no job is left leased for the reaper of the next start.
- 50 concurrent clients of mixed remember/recall for a few seconds (signet bench load's own
  code): no error and no acknowledged write missing afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
from daemon_process import daemon_env, free_port, make_workspace, store_rows

from fakes.llm_server import FakeLLMServer, Reply
from signet.bench.load import run_load
from signet.config import StoreConfig

REMEMBER = "/api/memory/remember"
SLOW_S = 60.0


def slow_llm_workspace(path: Path, llm_url: str, store: StoreConfig) -> Path:
    return make_workspace(path, (
        "embedding:\n  provider: none\n"
        f"llm:\n  provider: openai\n  model: slow-model\n  base_url: {llm_url}\n"
        "  timeout_ms: 120000\n"
        "memory:\n  pipelineV2:\n    workerPollMs: 50\n"
    ), store)


def headers(workspace: Path) -> dict[str, str]:
    token = workspace / ".daemon" / "token"
    return {"Authorization": f"Bearer {token.read_text().strip()}"} if token.exists() else {}


def job_statuses(workspace: Path, store: StoreConfig) -> list[tuple[str, str, int]]:
    return store_rows(workspace, store, "SELECT job_type, status, attempts FROM memory_jobs")


def wait_for(predicate, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_slow_llm_blocks_nothing_and_sigterm_releases_the_jobs_in_flight(
    tmp_path, daemons, suite_store
) -> None:
    with FakeLLMServer(default=Reply('{"facts": []}', delay_s=SLOW_S)) as llm:
        ws = slow_llm_workspace(tmp_path / "ws", llm.url, suite_store)
        daemon = daemons(ws, free_port())
        daemon.wait_healthy()
        with httpx.Client(base_url=daemon.url, headers=headers(ws), timeout=10) as client:
            for n in range(3):
                stored = client.post(REMEMBER, json={"content": f"Alice moved to Paris, note {n}"})
                assert stored.status_code == 200, stored.text
            assert wait_for(lambda: len(llm.requests) >= 1), "no extraction reached the LLM"
            assert any(status == "leased" for _t, status, _a in job_statuses(ws, suite_store))

            # The worker thread now waits on the LLM; the daemon answers as if it did not.
            # (An ordering check, not a timing one: the LLM answers only after SLOW_S, so
            # requests served while its job is still leased did not wait for it.)
            for n in range(10):
                assert client.get("/health").status_code == 200
                reply = client.post(REMEMBER, json={"content": f"written meanwhile {n}"})
                assert reply.status_code == 200
            assert any(status == "leased" for _t, status, _a in job_statuses(ws, suite_store))

        started = time.monotonic()
        code, err = daemon.terminate()
        took = time.monotonic() - started

    assert code == 0, err
    assert took < 20, f"shutdown took {took:.1f} s"
    statuses = job_statuses(ws, suite_store)
    assert statuses and not [s for s in statuses if s[1] == "leased"], statuses
    # The interrupted job did not fail: it is pending again with its attempt given back.
    assert all(attempts == 0 for _t, status, attempts in statuses if status == "pending")


def test_fifty_concurrent_clients_get_no_error_and_lose_no_write(tmp_path, suite_store) -> None:
    result = run_load([50], seconds=4, workdir=tmp_path, store_url=suite_store.url or None)
    run = result["runs"][0]
    assert run["errors"] == 0, run["error_samples"]
    assert run["lost_writes"] == 0
    assert run["acknowledged_writes"] > 50 and run["operations"]["recall"]["count"] > 50
    assert run["peak_rss_mb"] > 0


def test_signet_status_shows_the_daemons_telemetry(tmp_path, daemons, suite_store) -> None:
    ws = make_workspace(tmp_path / "ws", store=suite_store)
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy()
    with httpx.Client(base_url=daemon.url, headers=headers(ws), timeout=10) as client:
        assert client.post(REMEMBER, json={"content": "counted by telemetry"}).status_code == 200
        assert client.get("/api/memory/no-such-id").status_code == 404
    env = {**daemon_env(ws, port)}
    shown = subprocess.run([sys.executable, "-m", "signet", "status"], env=env,
                           capture_output=True, text=True, timeout=60)
    as_json = subprocess.run([sys.executable, "-m", "signet", "status", "--json"], env=env,
                             capture_output=True, text=True, timeout=60)
    daemon.terminate()
    assert shown.returncode == 0, shown.stderr
    assert "telemetry" in shown.stdout and "1 errors" in shown.stdout
    telemetry = json.loads(as_json.stdout)["telemetry"]
    assert telemetry["requests"] >= 2 and telemetry["errors"] == 1
