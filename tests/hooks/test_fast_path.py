"""`signet hook ...` starts fast: its plain argv skips the click CLI, and the process imports
no HTTP library, no numpy, no model, no store (checked in a real process with -X importtime);
anything else in argv goes to the click CLI with its usual messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from signet.hooks.fast import parse

HEAVY = ("numpy", "networkx", "onnxruntime", "tokenizers", "httpx", "click", "sqlean",
         "signet.store", "signet.app", "urllib.request", "http.client")


def test_a_hook_process_imports_nothing_heavy(tmp_path: Path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path), "SIGNET_PORT": "9"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "signet", "--workspace", str(tmp_path),
         "hook", "user-prompt-submit", "--harness", "claude-code"],
        input=b'{"prompt": "hi"}', env=env, capture_output=True, timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert "signet.hooks.runner" in imported
    assert not [m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY or
                any(m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize(("argv", "parsed"), [
    (["hook", "session-start"], (None, "session-start", "generic")),
    (["--workspace", "/w", "hook", "user-prompt-submit", "--harness", "codex"],
     (Path("/w"), "user-prompt-submit", "codex")),
    (["--workspace=/w", "hook", "session-end", "--harness=claude-code"],
     (Path("/w"), "session-end", "claude-code")),
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
    wrong = subprocess.run([sys.executable, "-m", "signet", "hook", "nope"],
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "nope" in wrong.stderr
