"""A hook that finds no daemon starts one in the background, one at a time, and still fails
open; the daemon it started imports what the hooks spooled meanwhile. Real hook processes
against a port nobody serves; the daemon they start is a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from daemon_process import NO_EMBEDDINGS, daemon_env, free_port, make_workspace
from hook_process import run_hook
from test_spool import end_payload, imported_messages, transcript, wait_for_empty_spool

from signet import spool

HOOKS = 6


def wait_for_daemon(port: int, timeout_s: float = 90) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(f"http://127.0.0.1:{port}/health", timeout=0.5)
            if reply.status_code == 200 and not reply.json().get("starting"):
                return int(reply.json()["pid"])
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("no daemon came up")


def stop(pid: int) -> None:
    """The daemon is the hooks' child, not ours: SIGTERM it and wait for it to go."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def test_hooks_that_find_no_daemon_start_one_and_lose_nothing(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", NO_EMBEDDINGS)
    port = free_port()
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "1"}
    names = [f"s{i}" for i in range(HOOKS)]
    for name in names:
        (tmp_path / f"{name}.jsonl").write_text(transcript(name, f"marker-{name}"))
    hooks = [
        subprocess.Popen(
            [sys.executable, "-m", "signet", "hook", "session-end", "--harness", "claude-code"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        for _ in names
    ]
    for proc, name in zip(hooks, names, strict=True):
        out, err = proc.communicate(
            json.dumps(end_payload(name, tmp_path / f"{name}.jsonl", tmp_path)).encode(), timeout=60)
        assert (proc.returncode, out, err) == (0, b"", b"")
    pid = wait_for_daemon(port)
    try:
        wait_for_empty_spool(workspace)
        # One daemon started, by one hook; every other hook saw it starting or just started.
        log = (workspace / ".daemon" / "logs" / "hooks.log").read_text()
        assert log.count("started the daemon in the background") == 1, log
        # A hook whose stdin came after the daemon was up handed its transcript over itself.
        assert 1 <= log.count("spooled as") <= HOOKS
        # A hook now reaches it: it succeeds (no log line) and starts nothing more.
        again = run_hook("session-start", {"session_id": "s9", "cwd": str(tmp_path)}, env)
        assert again.code == 0
        assert (workspace / ".daemon" / "logs" / "hooks.log").read_text() == log
    finally:
        stop(pid)
    assert imported_messages(workspace, names) == {
        name: [f"Deploy marker-{name} on Fridays.", "Noted."] for name in names}
    assert spool.pending(str(workspace)) == []


def test_no_daemon_is_started_for_a_workspace_that_was_never_set_up(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()  # a folder, but no agent.yaml: not a workspace anyone initialised
    env = {**daemon_env(workspace, free_port()), "SIGNET_AUTOSTART": "1"}
    done = run_hook("session-start", {"session_id": "s1"}, env)
    assert (done.code, done.stdout) == (0, "")
    assert not (workspace / ".daemon" / "autostart.lock").exists()


def test_signet_autostart_0_keeps_hooks_from_starting_a_daemon(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws", NO_EMBEDDINGS)
    env = {**daemon_env(workspace, free_port()), "SIGNET_AUTOSTART": "0"}
    done = run_hook("session-start", {"session_id": "s1"}, env)
    assert (done.code, done.stdout) == (0, "")
    assert "started the daemon" not in (workspace / ".daemon" / "logs" / "hooks.log").read_text()
    assert not (workspace / ".daemon" / "autostart.lock").exists()
