"""A real Claude Code for the end-to-end tests: `@anthropic-ai/claude-code` at the version pinned
in CLAUDE_CODE_VERSION, installed with npm into `<repo>/.cache/claude-code` (scripts/test does it
first; the fixture does it when it is missing), never globally. A newer Claude Code that changes
its hook payloads or requests fails these tests, not a user."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

ROOT = Path(__file__).resolve().parents[2]
VERSION = (Path(__file__).with_name("CLAUDE_CODE_VERSION")).read_text().strip()
PREFIX = ROOT / ".cache" / "claude-code"


def installed_version() -> str | None:
    package = PREFIX / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    binary = PREFIX / "node_modules" / ".bin" / "claude"
    if installed_version() != VERSION or not binary.exists():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the pinned Claude Code (scripts/test installs it)"
        PREFIX.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", "--no-save",
             f"@anthropic-ai/claude-code@{VERSION}"],
            capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and VERSION in version.stdout, version.stdout + version.stderr
    return binary
