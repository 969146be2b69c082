"""`signet doctor` through the real CLI against a real daemon, on a temporary HOME where
`signet connect claude-code` was run: all ok and exit 0; then broken (the hooks pointed at
another workspace, the daemon stopped, a hook's failure logged and its capture spooled): each
problem named with the command that fixes it, exit 1; the fix it prints for the hooks works;
a project's settings are checked with --project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from daemon_process import NO_EMBEDDINGS, DaemonProcess, daemon_env, free_port

from signet.cli.doctor import Check, summary
from signet.workspace import init_workspace


def signet(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def doctor(env: dict[str, str], *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    done = signet("doctor", "--json", *extra, env=env)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] == (done.returncode == 0)
    return done.returncode, {c["name"]: c for c in report["checks"]}


def test_doctor_finds_what_is_wrong_and_says_what_fixes_it(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path / "ws").workspace
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS)
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    env = {**daemon_env(workspace, port), "HOME": str(home), "SIGNET_AUTOSTART": "0",
           "PATH": os.environ["PATH"]}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    daemon = DaemonProcess(workspace, port)
    try:
        daemon.wait_healthy(timeout_s=60)
        assert signet("connect", "claude-code", env=env).returncode == 0

        code, checks = doctor(env)
        assert code == 0, checks
        assert checks["daemon"]["status"] == "ok" and checks["daemon"]["data"]["running"]
        assert checks["version"]["status"] == "ok"
        assert checks["port"]["data"] == {"host": "127.0.0.1", "port": port, "source": "SIGNET_PORT"}
        assert checks["hooks claude-code"]["status"] == "ok"
        assert checks["hooks claude-code"]["data"]["events"] == sorted(
            ["SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"])
        assert checks["hooks codex"]["status"] in ("info", "warn")  # not connected: no failure
        mcp = checks["mcp"]
        assert (mcp["status"], mcp["data"]["relay"], mcp["data"]["tools"] > 0) == ("ok", True, True)
        assert str(workspace) in mcp["data"]["command"]  # the entry connect wrote, spawned
        assert mcp["data"]["initialize_ms"] > 0
        assert checks["model"]["data"]["memories"] == 0
        assert checks["spool"]["status"] == checks["hook failures"]["status"] == "ok"

        # Broken: the hooks rewired to another workspace, the daemon down, a prompt's capture
        # spooled and its failure logged by a real hook.
        other = tmp_path / "other"
        assert signet("--workspace", str(other), "connect", "claude-code", env=env).returncode == 0
        daemon.terminate()
        hook = signet("hook", "user-prompt-submit", "--harness", "claude-code", env=env,
                      stdin=json.dumps({"session_id": "s1", "cwd": str(tmp_path),
                                        "prompt": "remember that the doctor works"}))
        assert hook.returncode == 0 and hook.stdout == ""

        code, checks = doctor(env, "--no-mcp")
        assert code == 1
        daemon_check = checks["daemon"]
        assert daemon_check["status"] == "fail" and "SIGNET_AUTOSTART=0" in daemon_check["detail"]
        assert f"--port {port} daemon start" in daemon_check["fix"]
        hooks = checks["hooks claude-code"]
        assert hooks["status"] == "fail" and f"another workspace, {other}" in hooks["detail"]
        assert hooks["fix"] == f"signet --workspace {workspace} --port {port} connect claude-code"
        assert checks["spool"]["status"] == "warn" and checks["spool"]["data"]["backlog"] == 1
        failures = checks["hook failures"]
        assert failures["status"] == "warn" and "Connection refused" in failures["detail"]
        assert "mcp" not in checks and "version" not in checks

        text = signet("doctor", "--no-mcp", env=env)
        assert text.returncode == 1
        assert "[FAIL] daemon:" in text.stdout and f"fix: {hooks['fix']}" in text.stdout
        # The stopped daemon and the rewired hooks: the waiting capture is not a third problem.
        assert text.stdout.rstrip().endswith("2 problem(s) found, 2 warning(s)")

        # The fix it printed for the hooks, run: they point at this workspace again.
        assert signet(*hooks["fix"].split()[1:], env=env).returncode == 0
        code, checks = doctor(env, "--no-mcp")
        assert checks["hooks claude-code"]["status"] == "ok"
        assert (code, checks["daemon"]["status"]) == (1, "fail")

        # A project's own settings (`connect --project DIR`) are checked with --project.
        project = tmp_path / "billing"
        assert signet("--workspace", str(other), "connect", "claude-code", "--project",
                      str(project), env=env).returncode == 0
        code, checks = doctor(env, "--no-mcp", "--project", str(project))
        hooks = checks["hooks claude-code"]
        assert hooks["status"] == "fail" and str(project / ".claude" / "settings.json") in hooks["data"]["files"]
        assert hooks["fix"].endswith(f"connect claude-code --project {project}")
        assert checks["hooks codex"]["status"] == "info"
    finally:
        daemon.kill()


def test_the_last_line_counts_warnings_beside_failures() -> None:
    ok, warn = Check("daemon", "ok", "up"), Check("spool", "warn", "1 waiting")
    fail = Check("hooks claude-code", "fail", "not connected")
    assert summary([ok]) == "no problems found"
    assert summary([ok, warn, warn]) == "no problems found, 2 warning(s)"
    assert summary([fail, warn, Check("model", "info", "none")]) == "1 problem(s) found, 1 warning(s)"
