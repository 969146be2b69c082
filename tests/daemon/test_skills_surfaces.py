"""Skills through the CLI and a real daemon: `signet skill install|list|show|remove` as
subprocesses, and the daemon's reconciler picking up a folder added, changed and removed by hand,
seen in recall over HTTP; on both backends (the `backend` fixture)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from daemon_process import free_port, make_workspace

SKILL = """---
name: release-notes
description: Write release notes from the merged pull requests
role: writer
---
Collect merged pull requests with `gh pr list --state merged`, group them by label.
"""
FAST = "embedding:\n  provider: none\nskills:\n  reconcile_interval_ms: 1000\n"


def signet(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": "1",
           "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def ok_json(ws: Path, *args: str) -> dict:
    done = signet(ws, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def recalled(client: httpx.Client, query: str) -> list[str]:
    reply = client.post("/api/memory/recall", json={"query": query, "mode": "keyword"})
    assert reply.status_code == 200, reply.text
    return [h["content"] for h in reply.json()["results"]
            if h["type"] == "procedural"]


def eventually(predicate, timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def store_section(request: pytest.FixtureRequest, backend: str) -> str:
    """The agent.yaml lines for the test's backend (PostgreSQL: a fresh database)."""
    if backend == "sqlite":
        return ""
    return f"store:\n  backend: postgres\n  url: {request.getfixturevalue('pg_url')}\n"


def test_the_cli_installs_lists_shows_and_removes(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    ws = make_workspace(tmp_path / "ws", "embedding:\n  provider: none\n"
                        + store_section(request, backend))
    source = tmp_path / "incoming"
    source.mkdir()
    (source / "SKILL.md").write_text(SKILL)
    installed = ok_json(ws, "skill", "install", str(source))
    assert installed["installed"] == "release-notes"
    [listed] = ok_json(ws, "skill", "list")["skills"]
    assert (listed["name"], listed["role"], listed["use_count"]) == ("release-notes", "writer", 0)
    shown = signet(ws, "skill", "show", "release-notes")
    assert "gh pr list --state merged" in shown.stdout
    again = signet(ws, "skill", "install", str(source))
    assert again.returncode == 1 and "already installed" in again.stderr
    assert ok_json(ws, "skill", "remove", "release-notes")["removed"] == "release-notes"
    assert ok_json(ws, "skill", "list")["skills"] == []
    missing = signet(ws, "skill", "show", "release-notes")
    assert missing.returncode == 1 and "no skill named" in missing.stderr


def test_the_daemon_follows_a_skill_folder_in_recall(
    tmp_path: Path, daemons, backend: str, request: pytest.FixtureRequest
) -> None:
    ws = make_workspace(tmp_path / "ws", FAST + store_section(request, backend))
    folder = ws / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    daemon = daemons(ws, free_port())
    daemon.wait_healthy()
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=10) as client:
        assert eventually(lambda: any("gh pr list" in c for c in recalled(client, "release notes"))), \
            "the daemon never indexed the skill"
        (folder / "SKILL.md").write_text(SKILL.replace("gh pr list --state merged",
                                                       "git log --merges"))
        assert eventually(lambda: any("git log --merges" in c for c in recalled(client, "release notes")))
        assert not any("gh pr list" in c for c in recalled(client, "release notes"))
        shutil.rmtree(folder)
        assert eventually(lambda: recalled(client, "release notes") == [])
    code, err = daemon.terminate()
    assert code == 0, err
