"""Real harnesses for the end-to-end tests, installed with npm under `<repo>/.cache` (scripts/test
does it first; the fixtures do it when it is missing), never globally:

- Claude Code: `@anthropic-ai/claude-code` at the version in CLAUDE_CODE_VERSION, in
  `.cache/claude-code`;
- OpenCode: `opencode-ai` at the version in OPENCODE_VERSION, in `.cache/opencode`, and the
  `@opencode-ai/plugin` package of the same version in `.cache/opencode-plugin`: OpenCode
  installs it into every config folder holding a plugin before it loads the plugin (about 10 s
  over the network), so the tests lay it there first (`seed_opencode_config`).

A newer harness that changes its hook payloads or requests fails these tests, not a user."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

ROOT = Path(__file__).resolve().parents[2]
VERSION = (Path(__file__).with_name("CLAUDE_CODE_VERSION")).read_text().strip()
PREFIX = ROOT / ".cache" / "claude-code"
OPENCODE_VERSION = (Path(__file__).with_name("OPENCODE_VERSION")).read_text().strip()
OPENCODE_PREFIX = ROOT / ".cache" / "opencode"
PLUGIN_PREFIX = ROOT / ".cache" / "opencode-plugin"


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


def _npm_version(prefix: Path, package: str) -> str | None:
    try:
        return str(json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _npm_install(prefix: Path, spec: str) -> None:
    npm = shutil.which("npm")
    assert npm, "npm is needed to install the pinned harness (scripts/test installs it)"
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", spec],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    binary = OPENCODE_PREFIX / "node_modules" / ".bin" / "opencode"
    if _npm_version(OPENCODE_PREFIX, "opencode-ai") != OPENCODE_VERSION or not binary.exists():
        _npm_install(OPENCODE_PREFIX, f"opencode-ai@{OPENCODE_VERSION}")
    if _npm_version(PLUGIN_PREFIX, "@opencode-ai/plugin") != OPENCODE_VERSION:
        _npm_install(PLUGIN_PREFIX, f"@opencode-ai/plugin@{OPENCODE_VERSION}")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and OPENCODE_VERSION in version.stdout, version.stdout + version.stderr
    return binary


@pytest.fixture
def seed_opencode_config() -> Callable[[Path], None]:
    """Lays into a config folder what OpenCode would install there, copied from the cache."""

    def seed(config_dir: Path) -> None:
        config_dir.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(PLUGIN_PREFIX / name, config_dir / name)
        shutil.copytree(PLUGIN_PREFIX / "node_modules", config_dir / "node_modules", symlinks=True)

    return seed

