"""`signet jobs list|show|requeue-dead` and `signet pipeline run --until-idle`, run as real
subprocesses against a tmp workspace whose LLM is the loopback fake server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from worker_support import Script

from fakes.llm_server import FakeLLMServer, Reply


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def signet(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(free_port()),
        "HOME": str(workspace.parent), "OMP_NUM_THREADS": "1", "COLUMNS": "200",
    }
    return subprocess.run(
        [sys.executable, "-m", "signet", *args], env=env, capture_output=True, text=True,
        timeout=120,
    )


def ok_json(workspace: Path, *args: str) -> Any:
    done = signet(workspace, "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def workspace_for(tmp_path: Path, url: str) -> Path:
    workspace = tmp_path / "agents"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(
        "embedding:\n  provider: none\n"
        f"llm:\n  provider: ollama\n  model: fake\n  base_url: {url}\n  timeout_ms: 2000\n"
        "memory:\n  pipelineV2:\n    hints:\n      enabled: false\n",
        encoding="utf-8",
    )
    return workspace


def test_jobs_are_listed_run_until_idle_and_shown(tmp_path: Path) -> None:
    script = Script(facts={"Berlin": [{"content": "The user lives in Berlin", "confidence": 0.9}]})
    with FakeLLMServer(responder=script) as server:
        ws = workspace_for(tmp_path, server.url)
        ok_json(ws, "remember", "I moved to Berlin last year.")
        listed = ok_json(ws, "jobs", "list")
        assert [(j["job_type"], j["status"]) for j in listed["jobs"]] == [("extract", "pending")]
        assert listed["depths"] == {"extract": {"pending": 1}}

        ran = ok_json(ws, "pipeline", "run", "--until-idle")
        assert ran["ticks"] >= 1 and ran["depths"] == {"extract": {"completed": 1}}
        job_id = listed["jobs"][0]["id"]
        shown = ok_json(ws, "jobs", "show", job_id)
        assert shown["status"] == "completed" and shown["result"]["outcomes"] == {"add": 1}
        memories = ok_json(ws, "list")
        assert {m["content"] for m in memories["items"]} == {
            "I moved to Berlin last year.", "The user lives in Berlin"
        }
        readable = signet(ws, "jobs", "list")
        assert readable.returncode == 0 and "extract" in readable.stdout
        assert "Queue: extract 1 completed." in readable.stdout


def test_dead_jobs_show_their_error_and_can_be_requeued(tmp_path: Path) -> None:
    with FakeLLMServer(default=Reply("overloaded", status=500)) as server:
        ws = workspace_for(tmp_path, server.url)
        ok_json(ws, "remember", "I moved to Berlin last year.")
        for pause in (0.0, 1.1, 2.1):  # the retry back-off: 1 s, then 2 s
            time.sleep(pause)
            ok_json(ws, "pipeline", "run", "--until-idle")
        [job] = ok_json(ws, "jobs", "list", "--status", "dead")["jobs"]
        assert job["attempts"] == 3 and "500" in job["error"]
        readable = signet(ws, "jobs", "show", job["id"])
        assert "ProviderError" in readable.stdout

        server.default = Reply(json.dumps({"facts": []}))
        assert ok_json(ws, "jobs", "requeue-dead") == {"requeued": 1}
        assert ok_json(ws, "jobs", "show", job["id"])["status"] == "pending"
        ok_json(ws, "pipeline", "run", "--until-idle")
        assert ok_json(ws, "jobs", "show", job["id"])["status"] == "completed"
        assert signet(ws, "jobs", "show", "no-such-job").returncode == 1
