"""`signet hook ...` starts fast: its plain argv skips the click CLI, and the process imports
no HTTP library, no numpy, no model, no store (checked in a real process with -X importtime);
once its settings are cached, not even the configuration (PyYAML, dataclasses, typing); a
changed agent.yaml or environment is still seen. Anything else in argv goes to the click CLI
with its usual messages."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from signet.hooks.fast import parse
from signet.hooks.settings import CACHE_NAME

HEAVY = ("numpy", "networkx", "onnxruntime", "tokenizers", "httpx", "click", "sqlean",
         "signet.store", "signet.app", "urllib.request", "http.client")
CONFIGURATION = ("signet.config", "yaml", "dataclasses", "typing", "pathlib")


def _hook_imports(workspace: Path, env: dict[str, str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "signet", "--workspace", str(workspace),
         "hook", "user-prompt-submit", "--harness", "claude-code"],
        input=b'{"prompt": "hi"}', env=env, capture_output=True, timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    return {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()
            if line.startswith("import time:")}


def _among(imported: set[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in imported if m in names or any(m.startswith(h + ".") for h in names)]


def test_a_hook_process_imports_nothing_heavy(tmp_path: Path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path), "SIGNET_PORT": "9"}
    imported = _hook_imports(tmp_path, env)
    assert "signet.hooks.runner" in imported
    assert not _among(imported, HEAVY)


def test_cached_settings_spare_the_configuration_and_follow_agent_yaml(tmp_path: Path) -> None:
    (tmp_path / ".daemon").mkdir()
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path)}
    env.pop("SIGNET_PORT", None)
    (tmp_path / "agent.yaml").write_text(f"port: {_free_port()}\n")
    assert "signet.config" in _hook_imports(tmp_path, env)  # first run: Config.load, then cached
    assert not _among(_hook_imports(tmp_path, env), CONFIGURATION)
    # A changed agent.yaml is seen by the very next hook: it asks the new port.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        (tmp_path / "agent.yaml").write_text(f"port: {port}\nhooks:\n  prompt_submit_timeout_ms: 2000\n")
        assert "signet.config" in _hook_imports(tmp_path, env)
        server.settimeout(5)
        conn, _ = server.accept()  # the hook connected to the port agent.yaml now names
        conn.close()
    cached = json.loads((tmp_path / ".daemon" / CACHE_NAME).read_text())
    assert (cached["port"], cached["budgets_ms"]["user-prompt-submit"]) == (port, 2000)
    # So is the environment: SIGNET_PORT overrides the file, as for every command.
    assert "signet.config" in _hook_imports(tmp_path, {**env, "SIGNET_PORT": "9"})


def test_a_hook_never_creates_a_workspace(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    env = {**os.environ, "SIGNET_WORKSPACE": str(missing), "SIGNET_PORT": "9"}
    _hook_imports(missing, env)
    _hook_imports(missing, env)
    assert list(tmp_path.iterdir()) == []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("argv", "parsed"), [
    (["hook", "session-start"], (None, "session-start", "generic", None)),
    (["--workspace", "/w", "hook", "user-prompt-submit", "--harness", "codex"],
     ("/w", "user-prompt-submit", "codex", None)),
    (["--workspace=/w", "hook", "session-end", "--harness=claude-code"],
     ("/w", "session-end", "claude-code", None)),
    (["--workspace", "/w", "--port", "3851", "hook", "session-end", "--harness", "codex"],
     ("/w", "session-end", "codex", "3851")),
    (["--port=3851", "hook", "session-start"], (None, "session-start", "generic", "3851")),
    (["--port", "nope", "hook", "session-start"], None),
    (["--port", "1", "--port", "2", "hook", "session-start"], None),
    (["hook", "--help"], None),
    (["hook", "nope"], None),
    (["hook", "session-start", "--harness", "vim"], None),
    (["hook", "session-start", "--json"], None),
    (["recall", "hook"], None),
])
def test_only_the_plain_hook_argv_takes_the_fast_path(argv: list[str], parsed: object) -> None:
    assert parse(argv) == parsed


def test_anything_else_gets_the_cli_and_its_messages() -> None:
    helped = subprocess.run([sys.executable, "-m", "signet", "hook", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "user-prompt-submit" in helped.stdout
    # Exit 1, never 2: Claude Code blocks and erases the prompt on a hook's exit 2.
    for argv, named in ((["nope"], "nope"), (["user-prompt-submit", "--harness", "claude"], "claude"),
                        (["user-prompt-submit", "--harnes", "claude-code"], "--harnes")):
        wrong = subprocess.run([sys.executable, "-m", "signet", "hook", *argv],
                               capture_output=True, text=True, timeout=60, input="{}")
        assert wrong.returncode == 1 and named in wrong.stderr and wrong.stdout == ""
