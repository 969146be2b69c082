"""`signet daemon install|uninstall`, `signet setup`, and what `connect` records, through the
real CLI as subprocesses on a temporary HOME and XDG_CONFIG_HOME: the user service's file (and
`systemd-analyze verify` of it where the tool exists), a stand-in `systemctl` on PATH
recording how it is enabled, the harnesses found connected, everything idempotent; a port set
in the environment travels into the hook commands and the MCP entry."""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from answering_server import AnsweringServer

SYSTEMCTL = """#!/bin/sh
echo "$@" >> "${0%/*}/calls"
"""


def signet(home: Path, *args: str, extra: dict[str, str] | None = None) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "SIGNET_PORT")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               SIGNET_WORKSPACE=str(home / ".agents"), HF_HUB_OFFLINE="1",
               PATH=str(home / "bin"), **(extra or {}))
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def fake_systemctl(home: Path) -> Path:
    (home / "bin").mkdir(exist_ok=True)
    tool = home / "bin" / "systemctl"
    tool.write_text(SYSTEMCTL)
    tool.chmod(0o755)
    return home / "bin" / "calls"


def test_daemon_install_writes_a_user_unit_enables_it_and_uninstall_removes_it(tmp_path: Path) -> None:
    calls = fake_systemctl(tmp_path)
    out = signet(tmp_path, "daemon", "install", "--platform", "systemd")
    unit = tmp_path / ".config" / "systemd" / "user" / "signet.service"
    assert f"{unit} written" in out and "enabled and started" in out
    text = unit.read_text()
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(exec_start.removeprefix("ExecStart="))
    assert argv[-5:] == ["--workspace", str(tmp_path / ".agents"), "daemon", "start", "--foreground"]
    assert Path(argv[0]).exists() and "Restart=on-failure" in text and "WantedBy=default.target" in text
    assert calls.read_text().splitlines() == ["--user daemon-reload", "--user enable --now signet.service"]
    if shutil.which("systemd-analyze"):
        verify = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True,
                                timeout=60)
        assert verify.returncode == 0, verify.stderr

    again = signet(tmp_path, "daemon", "install", "--platform", "systemd", "--no-enable")
    assert f"{unit} unchanged" in again and unit.read_text() == text

    gone = signet(tmp_path, "daemon", "uninstall", "--platform", "systemd")
    assert f"{unit} deleted" in gone and not unit.exists()
    assert calls.read_text().splitlines()[-2:] == ["--user disable --now signet.service",
                                                   "--user daemon-reload"]


def test_without_systemctl_the_unit_is_written_and_the_commands_are_named(tmp_path: Path) -> None:
    out = signet(tmp_path, "daemon", "install", "--platform", "systemd")
    assert "warning: systemctl is not on PATH" in out
    assert "to enable it: systemctl --user daemon-reload; systemctl --user enable --now signet.service" in out
    assert (tmp_path / ".config" / "systemd" / "user" / "signet.service").exists()


def test_daemon_install_writes_a_launchd_agent(tmp_path: Path) -> None:
    signet(tmp_path, "--workspace", str(tmp_path / "other"), "daemon", "install",
           "--platform", "launchd", "--no-enable")
    (plist,) = (tmp_path / "Library" / "LaunchAgents").glob("ai.signet.daemon-*.plist")
    data = plistlib.loads(plist.read_bytes())
    assert data["Label"] == plist.stem and data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["ProgramArguments"][-5:] == ["--workspace", str(tmp_path / "other"), "daemon",
                                             "start", "--foreground"]
    assert data["EnvironmentVariables"]["SIGNET_WORKSPACE"] == str(tmp_path / "other")


def test_setup_inits_connects_what_is_found_installs_and_runs_again_unchanged(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()  # Codex is "installed"; nothing else is
    calls = fake_systemctl(tmp_path)
    first = signet(tmp_path, "setup")
    assert (tmp_path / ".agents" / "agent.yaml").exists()
    assert (tmp_path / ".codex" / "hooks.json").exists() and not (tmp_path / ".claude").exists()
    assert (tmp_path / ".config" / "systemd" / "user" / "signet.service").exists()
    assert "codex:" in first and "enabled and started" in first
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".agents" not in p.parts
             and p != calls}
    second = signet(tmp_path, "setup")
    assert " added" not in second and "0 created" in second
    assert "signet.service unchanged" in second
    assert {p: p.read_bytes() for p in files} == files


def test_a_port_from_the_environment_travels_into_the_hooks_and_the_mcp_entry(tmp_path: Path) -> None:
    server = AnsweringServer()
    try:
        signet(tmp_path, "connect", "claude-code", extra={"SIGNET_PORT": str(server.port)})
        settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
        command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        mcp = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["signet"]
        assert mcp["args"][-3:] == ["--port", str(server.port), "mcp"]
        # A harness started from a shell without SIGNET_PORT still reaches that daemon.
        env = {k: v for k, v in os.environ.items() if k != "SIGNET_PORT"}
        done = subprocess.run(shlex.split(command), input=b'{"session_id": "s1"}', env=env,
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and server.connections == 1
        assert "remembered line" in done.stdout.decode()
    finally:
        server.sock.close()


@pytest.mark.parametrize("existing", [None, {"permissions": {"allow": ["Bash(ls)"]}}])
def test_allow_tools_adds_the_permission_rule_and_uninstall_takes_it_out(
    tmp_path: Path, existing: dict[str, object] | None
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    if existing is not None:
        settings.parent.mkdir()
        settings.write_text(json.dumps(existing, indent=4))
    before = settings.read_bytes() if existing is not None else None
    signet(tmp_path, "connect", "claude-code")
    assert "mcp__signet" not in settings.read_text()  # opt-in
    signet(tmp_path, "connect", "claude-code", "--allow-tools")
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert allow == [*(["Bash(ls)"] if existing else []), "mcp__signet"]
    signet(tmp_path, "connect", "claude-code", "--uninstall")
    assert (settings.read_bytes() if settings.exists() else None) == before
