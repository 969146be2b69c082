"""`signet connect <harness>` on a temporary HOME, through the real CLI as a subprocess: valid
config written, idempotent, `--uninstall` restores the original bytes, `--dry-run` writes
nothing, only the named harness is touched, and a user's later edits survive an uninstall."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from fakes.transcripts import codex
from signet import spool
from signet.app import SignetApp
from signet.config import Config
from signet.daemon.spool_import import import_spool

# The user's own config before connect, deliberately not in our formatting (4-space indent, no
# final newline), so only a byte-for-byte restore gives these bytes back.
ORIGINAL = {
    "claude-code": (".claude/settings.json", json.dumps(
        {"permissions": {"allow": ["Bash(ls)"]},
         "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}, indent=4)),
    "codex": (".codex/config.toml", 'model = "o4-mini"\n\n[mcp_servers.other]\ncommand = "other"'),
    "opencode": (".config/opencode/opencode.json", json.dumps({"theme": "dark"}, indent=4)),
    "cursor": (".cursor/mcp.json", json.dumps({"mcpServers": {"other": {"command": "x"}}}, indent=4)),
}
WRITTEN = {
    "claude-code": [".claude/settings.json", ".claude.json"],
    "codex": [".codex/hooks.json", ".codex/config.toml"],
    "opencode": [".config/opencode/opencode.json", ".config/opencode/plugins/signet.js"],
    "cursor": [".cursor/hooks.json", ".cursor/mcp.json"],
}


def signet(home: Path, *args: str, code: int = 0, path_first: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), SIGNET_WORKSPACE=str(home / "ws"), HF_HUB_OFFLINE="1")
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    done = subprocess.run([sys.executable, "-m", "signet", *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == code, done.stderr
    return done.stdout + done.stderr


def snapshot(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and "ws" not in p.relative_to(home).parts}


@pytest.mark.parametrize("harness", list(ORIGINAL))
def test_connect_is_idempotent_and_uninstall_restores_the_bytes(tmp_path: Path, harness: str) -> None:
    name, text = ORIGINAL[harness]
    (tmp_path / name).parent.mkdir(parents=True)
    (tmp_path / name).write_text(text)
    before = snapshot(tmp_path)

    out = signet(tmp_path, "connect", harness)
    assert "added" in out
    after = snapshot(tmp_path)
    for written in WRITTEN[harness]:
        assert written in after, out
    assert (tmp_path / (name + ".signet-backup")).read_bytes() == before[name]
    _check_valid(tmp_path, harness)

    again = signet(tmp_path, "connect", harness)
    assert snapshot(tmp_path) == after and "added" not in again and "unchanged" in again

    signet(tmp_path, "connect", harness, "--uninstall")
    assert snapshot(tmp_path) == before


def _check_valid(home: Path, harness: str) -> None:
    if harness == "claude-code":
        settings = json.loads((home / ".claude/settings.json").read_text())
        assert settings["permissions"] == {"allow": ["Bash(ls)"]}  # the user's keys kept
        assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "say done"}]}]
        events = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit",
                  "PreCompact": "pre-compaction", "SessionEnd": "session-end"}
        for event, ours in events.items():
            (group,) = settings["hooks"][event]
            (hook,) = group["hooks"]
            assert hook["type"] == "command" and hook["timeout"] >= 2
            argv = shlex.split(hook["command"])
            assert argv[-4:] == ["hook", ours, "--harness", "claude-code"]
            assert argv[argv.index("--workspace") + 1] == str(home / "ws")
        server = json.loads((home / ".claude.json").read_text())["mcpServers"]["signet"]
        assert server["type"] == "stdio" and server["args"][-1] == "mcp"
    elif harness == "codex":
        config = tomllib.loads((home / ".codex/config.toml").read_text())
        assert config["model"] == "o4-mini" and set(config["mcp_servers"]) == {"other", "signet"}
        assert config["mcp_servers"]["signet"]["args"][-1] == "mcp"
        hooks = json.loads((home / ".codex/hooks.json").read_text())["hooks"]
        assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "Stop"}
        stop = shlex.split(hooks["Stop"][0]["hooks"][0]["command"])
        assert stop[-4:] == ["hook", "pre-compaction", "--harness", "codex"]
    elif harness == "opencode":
        config = json.loads((home / ".config/opencode/opencode.json").read_text())
        assert config["theme"] == "dark" and config["mcp"]["signet"]["type"] == "local"
        assert config["mcp"]["signet"]["command"][-1] == "mcp"
        plugin = (home / ".config/opencode/plugins/signet.js").read_text()
        assert "user-prompt-submit" in plugin and "--harness opencode" in plugin
        assert 'event.type !== "session.idle"' in plugin and '"pre-compaction"' in plugin
        checked = subprocess.run(["node", "--check", str(home / ".config/opencode/plugins/signet.js")],
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr
    else:
        servers = json.loads((home / ".cursor/mcp.json").read_text())["mcpServers"]
        assert set(servers) == {"other", "signet"}


def test_the_hook_command_written_for_claude_code_runs_and_fails_open(tmp_path: Path) -> None:
    signet(tmp_path, "connect", "claude-code")
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    env = {**os.environ, "HOME": str(tmp_path), "SIGNET_PORT": "9"}  # nothing listens there
    done = subprocess.run(shlex.split(command), input=b'{"session_id": "s", "prompt": "hi"}',
                          env=env, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    out = signet(tmp_path, "connect", "claude-code", "--dry-run")
    assert "would be added" in out and "+++ " in out and '"SessionStart"' in out
    assert snapshot(tmp_path) == {}
    signet(tmp_path, "connect", "claude-code")
    out = signet(tmp_path, "connect", "claude-code", "--uninstall", "--dry-run")
    assert "would be deleted" in out and (tmp_path / ".claude/settings.json").exists()


def test_only_the_named_harness_is_touched(tmp_path: Path) -> None:
    signet(tmp_path, "connect", "codex")
    assert set(snapshot(tmp_path)) == set(WRITTEN["codex"])


def test_a_first_connect_creates_files_that_uninstall_deletes(tmp_path: Path) -> None:
    signet(tmp_path, "connect", "opencode")
    signet(tmp_path, "connect", "opencode", "--uninstall")
    assert snapshot(tmp_path) == {}


def test_uninstall_after_the_user_edited_the_file_keeps_their_edit(tmp_path: Path) -> None:
    signet(tmp_path, "connect", "claude-code")
    path = tmp_path / ".claude/settings.json"
    settings = json.loads(path.read_text())
    settings["model"] = "opus"
    path.write_text(json.dumps(settings))
    out = signet(tmp_path, "connect", "claude-code", "--uninstall")
    assert "removed" in out
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_project_config_goes_into_the_project(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    signet(tmp_path, "connect", "claude-code", "--project", str(project))
    assert set(snapshot(tmp_path)) == {"repo/.claude/settings.json", "repo/.mcp.json"}


def test_a_config_that_does_not_parse_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text("{broken")
    out = signet(tmp_path, "connect", "claude-code", code=1)
    assert "not valid JSON" in out and path.read_text() == "{broken"
    assert not (tmp_path / ".claude.json").exists()


def test_nothing_is_written_when_one_of_the_files_cannot_be_edited(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"  # the second file claude-code edits
    path.write_text("[1, 2]")
    out = signet(tmp_path, "connect", "claude-code", code=1)
    assert "not a JSON object" in out and snapshot(tmp_path) == {".claude.json": b"[1, 2]"}


def test_codex_stop_hands_the_rollout_to_the_session_layer(tmp_path: Path) -> None:
    """The Stop command connect wrote, run with a Codex Stop payload while no daemon runs: the
    rollout is spooled, and the import makes it a Codex session (still open: more turns come)."""
    signet(tmp_path, "init")
    signet(tmp_path, "connect", "codex")
    hooks = json.loads((tmp_path / ".codex/hooks.json").read_text())["hooks"]
    command = hooks["Stop"][0]["hooks"][0]["command"]
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(codex([("user", "Use PostgreSQL for the ledger."), ("assistant", "Noted.")],
                             session_id="cx1"))
    payload = {"session_id": "cx1", "transcript_path": str(rollout), "cwd": str(tmp_path),
               "hook_event_name": "Stop", "stop_hook_active": False}
    env = {**os.environ, "HOME": str(tmp_path), "SIGNET_PORT": "9", "SIGNET_AUTOSTART": "0"}
    done = subprocess.run(shlex.split(command), input=json.dumps(payload).encode(), env=env,
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")
    workspace = tmp_path / "ws"
    assert len(spool.pending(str(workspace))) == 1
    with SignetApp.open(Config.load(workspace, {}), embedder=None) as app:
        assert import_spool(app) == 1
        shown = app.session_show("cx1")
    assert shown["harness"] == "codex" and not shown["ended_at"]
    assert [m["text"] for m in shown["messages"]] == ["Use PostgreSQL for the ledger.", "Noted."]


def _llm_keys(workspace: Path) -> tuple[str, list[str]]:
    llm = yaml.safe_load((workspace / "agent.yaml").read_text())["llm"]
    return llm["provider"], llm["command"]


def test_extract_makes_the_harness_the_llm_and_uninstall_undoes_it(tmp_path: Path) -> None:
    """--extract: llm.provider claude-code and the binary's absolute path (a user service's
    PATH is shorter than the shell's), the file's comments kept; after the user's own edit of
    agent.yaml, --uninstall sets both keys back and keeps that edit."""
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    signet(tmp_path, "init")
    config = tmp_path / "ws" / "agent.yaml"
    comments = [line for line in config.read_text().splitlines() if line.lstrip().startswith("#")]
    signet(tmp_path, "connect", "claude-code")
    assert _llm_keys(tmp_path / "ws") == ("none", [])  # opt-in
    out = signet(tmp_path, "connect", "claude-code", "--extract", path_first=binary.parent)
    assert "llm.provider claude-code added" in out and "signet daemon stop" in out
    assert _llm_keys(tmp_path / "ws") == ("claude-code", [str(binary)])
    assert [line for line in config.read_text().splitlines()
            if line.lstrip().startswith("#")] == comments
    status = json.loads(signet(tmp_path, "--json", "status"))
    assert "claude-code" in json.dumps(status["llm"])
    config.write_text(config.read_text().replace("max_tokens: 1024", "max_tokens: 2048"))
    out = signet(tmp_path, "connect", "claude-code", "--uninstall")
    assert "llm.provider claude-code removed" in out
    assert _llm_keys(tmp_path / "ws") == ("none", [])
    assert yaml.safe_load(config.read_text())["llm"]["max_tokens"] == 2048


def test_extract_never_replaces_a_provider_the_user_chose(tmp_path: Path) -> None:
    signet(tmp_path, "init")
    config = tmp_path / "ws" / "agent.yaml"
    text = config.read_text().replace('  provider: "none"\n  # Model name as the provider knows it.',
                                      '  provider: "anthropic"\n  # Model name as the provider knows it.')
    config.write_text(text)
    out = signet(tmp_path, "connect", "claude-code", "--extract", code=1)
    assert "llm.provider is 'anthropic' already" in out and config.read_text() == text
    assert not (tmp_path / ".claude.json").exists()  # nothing half done
    out = signet(tmp_path, "connect", "cursor", "--extract", code=1)
    assert "cursor has no CLI to run as the LLM" in out
