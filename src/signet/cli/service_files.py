"""The user service that keeps the daemon running: a systemd user unit or a launchd agent, pure
functions of the daemon's command, the workspace and the port. The default workspace's service is
`signet` (`ai.signet.daemon`); another workspace's gets a suffix from its path, so two workspaces
get two services.
"""

from __future__ import annotations

import hashlib
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from signet.errors import ConfigError

__all__ = ["PLATFORMS", "Service", "default_platform", "disable", "enable", "run_all", "service_for"]

PLATFORMS = ("systemd", "launchd")
ENV_DEFAULTS = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Service:
    platform: str
    name: str  # the unit's name (signet.service) or the agent's label (ai.signet.daemon)
    path: Path
    text: str


def default_platform() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def service_for(
    platform: str, argv: list[str], workspace: Path, env: Mapping[str, str],
) -> Service:
    """The service file that runs `argv` (signet --workspace W [--port N] daemon start
    --foreground)."""
    home = Path(env.get("HOME") or Path.home())
    default = (home / ".agents").absolute() == workspace.absolute()
    suffix = "" if default else "-" + hashlib.sha256(str(workspace).encode()).hexdigest()[:8]
    variables = {"SIGNET_WORKSPACE": str(workspace), **ENV_DEFAULTS}
    if platform == "systemd":
        name = f"signet{suffix}.service"
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        return Service(platform, name, config / "systemd" / "user" / name,
                       _unit(argv, workspace, variables))
    if platform == "launchd":
        label = f"ai.signet.daemon{suffix}"
        path = home / "Library" / "LaunchAgents" / f"{label}.plist"
        return Service(platform, label, path, _plist(label, argv, workspace, variables))
    raise ConfigError(f"unknown service platform {platform!r} (one of {', '.join(PLATFORMS)})")


def _unit(argv: list[str], workspace: Path, variables: Mapping[str, str]) -> str:
    lines = [
        "# Written by `signet daemon install`; `signet daemon uninstall` removes it.",
        "[Unit]",
        f"Description=Signet memory daemon ({_escape(str(workspace))})",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={' '.join(_quote(a) for a in argv)}",
        f"WorkingDirectory={_quote(str(workspace))}",
        *(f"Environment={_quote(f'{k}={v}')}" for k, v in variables.items()),
        "Restart=on-failure",
        "RestartSec=5",
        # The daemon's own graceful stop takes up to about 30 s (daemon/lifecycle.py).
        "TimeoutStopSec=40",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def _quote(word: str) -> str:
    """One word of a unit file: specifiers (%) and variables ($) escaped, quoted when needed."""
    escaped = _escape(word).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"' if any(c in word for c in ' \t"\'\\;') or not word else escaped


def _escape(text: str) -> str:
    return text.replace("%", "%%").replace("$", "$$")


def _plist(label: str, argv: list[str], workspace: Path, variables: Mapping[str, str]) -> str:
    log = str(workspace / ".daemon" / "logs" / "launchd.log")
    data = {
        "Label": label,
        "ProgramArguments": list(argv),
        "WorkingDirectory": str(workspace),
        "EnvironmentVariables": dict(variables),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    return plistlib.dumps(data, sort_keys=False).decode("utf-8")


def enable(service: Service, uid: int) -> list[list[str]]:
    """The commands that load and start the service (run by the caller, in order)."""
    if service.platform == "systemd":
        return [["systemctl", "--user", "daemon-reload"],
                ["systemctl", "--user", "enable", "--now", service.name]]
    return [["launchctl", "bootstrap", f"gui/{uid}", str(service.path)]]


def disable(service: Service, uid: int) -> list[list[str]]:
    """The commands that stop and unload it (before the file is deleted)."""
    if service.platform == "systemd":
        return [["systemctl", "--user", "disable", "--now", service.name],
                ["systemctl", "--user", "daemon-reload"]]
    return [["launchctl", "bootout", f"gui/{uid}/{service.name}"]]


def run_all(commands: list[list[str]]) -> str | None:
    """Run the commands in order; None, or why one failed (the tool missing, its stderr)."""
    for command in commands:
        if shutil.which(command[0]) is None:
            return f"{command[0]} is not on PATH"
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(command)}: {exc}"
        if done.returncode != 0:
            reason = (done.stderr or done.stdout).strip().splitlines()
            return f"{' '.join(command)} failed: {reason[-1] if reason else done.returncode}"
    return None
