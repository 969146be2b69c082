"""`signet daemon start|stop|status|logs|install|uninstall`: thin wrappers over
`signet.daemon.lifecycle` and the user service (cli/service_files.py). The lifecycle is imported
inside each command, as it pulls in the web stack and the CLI must start fast.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from signet.cli import output, service_files
from signet.cli.client import daemon_url
from signet.cli.harness_targets import signet_argv, travelling_port
from signet.cli.state import CliState, json_and_state
from signet.errors import SignetError

__all__ = ["daemon"]


def lifecycle() -> ModuleType:
    try:
        from signet.daemon import lifecycle as module
    except ImportError as exc:
        raise SignetError(
            f"the daemon cannot be loaded: {exc}", code="daemon_unavailable"
        ) from exc
    return module


@click.group()
def daemon() -> None:
    """Run and inspect the background daemon that owns the database."""


@daemon.command()
@click.option("--foreground", is_flag=True, help="Run in this process until interrupted.")
@json_and_state
def start(state: CliState, foreground: bool) -> None:
    """Start the daemon (detached unless --foreground)."""
    cfg = state.config()
    if foreground:
        lifecycle().run_foreground(cfg)
        return
    pid = lifecycle().start_background(cfg)
    state.show(
        {"pid": pid, "url": daemon_url(cfg)},
        lambda d: click.echo(f"Daemon started (pid {d['pid']}) at {d['url']}"),
    )


@daemon.command()
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="Seconds to wait for a graceful stop before killing the daemon.")
@json_and_state
def stop(state: CliState, timeout: float) -> None:
    """Stop the running daemon."""
    stopped = lifecycle().stop(state.config(), timeout_s=timeout)
    state.show(
        {"stopped": stopped},
        lambda d: click.echo("Daemon stopped" if d["stopped"] else "No daemon was running"),
    )


@daemon.command(name="status")
@json_and_state
def daemon_status(state: CliState) -> None:
    """Whether the daemon runs, its pid, port and uptime."""
    state.show(lifecycle().status(state.config()), output.print_daemon_status)


@daemon.command()
@click.option("-n", "--lines", type=click.IntRange(min=1), default=50, show_default=True)
@json_and_state
def logs(state: CliState, lines: int) -> None:
    """Print the last lines of the daemon's log files."""
    files: list[Path] = lifecycle().log_files(state.config())
    tails = [{"path": str(path), "lines": tail(path, lines)} for path in files]
    state.show({"files": tails}, print_tails)


def tail(path: Path, count: int) -> list[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in deque(handle, maxlen=count)]
    except FileNotFoundError:
        return []  # rotated away between listing and reading


def print_tails(data: dict[str, list[dict[str, object]]]) -> None:
    if not data["files"]:
        click.echo("No daemon log files yet", err=True)
    for entry in data["files"]:
        click.echo(f"==> {entry['path']} <==")
        for line in entry["lines"]:  # type: ignore[attr-defined]
            click.echo(line)


PLATFORM_OPTION = click.option(
    "--platform", type=click.Choice(service_files.PLATFORMS), default=None,
    help="systemd (a user unit) or launchd (a user agent); default: this system's.",
)


@daemon.command()
@PLATFORM_OPTION
@click.option("--no-enable", is_flag=True, help="Only write the service file; enable nothing.")
@json_and_state
def install(state: CliState, platform: str | None, no_enable: bool) -> None:
    """Install the daemon as a user service that starts at login and restarts on failure
    (a systemd user unit on Linux, a launchd agent on macOS)."""
    state.show(install_service(state, platform, enable=not no_enable), print_service)


@daemon.command()
@PLATFORM_OPTION
@json_and_state
def uninstall(state: CliState, platform: str | None) -> None:
    """Stop, disable and delete the user service `signet daemon install` wrote."""
    service = _service(state, platform)
    result: dict[str, Any] = {"platform": service.platform, "service": service.name,
                              "path": str(service.path), "action": "absent", "error": None}
    if service.path.exists():
        result["error"] = service_files.run_all(service_files.disable(service, os.getuid()))
        service.path.unlink()
        result["action"] = "deleted"
    state.show(result, print_service)


def install_service(state: CliState, platform: str | None, *, enable: bool) -> dict[str, Any]:
    """Write the service file (unchanged when it already says the same) and enable it."""
    service = _service(state, platform)
    old = service.path.read_text("utf-8") if service.path.exists() else None
    action = "unchanged" if old == service.text else ("updated" if old is not None else "written")
    if old != service.text:
        service.path.parent.mkdir(parents=True, exist_ok=True)
        temp = service.path.with_name(f".{service.path.name}.tmp")
        temp.write_text(service.text, "utf-8")
        temp.replace(service.path)
    commands = service_files.enable(service, os.getuid())
    error = service_files.run_all(commands) if enable else None
    return {"platform": service.platform, "service": service.name, "path": str(service.path),
            "action": action, "enabled": enable and error is None, "error": error,
            "enable_commands": [" ".join(c) for c in commands]}


def _service(state: CliState, platform: str | None) -> service_files.Service:
    cfg = state.config()
    argv = [*signet_argv(cfg.workspace, travelling_port(cfg.port, os.environ)),
            "daemon", "start", "--foreground"]
    return service_files.service_for(
        platform or service_files.default_platform(), argv, cfg.workspace, os.environ)


def print_service(data: dict[str, Any]) -> None:
    click.echo(f"{data['platform']} service {data['service']}: {data['path']} {data['action']}")
    if data.get("enabled"):
        click.echo("enabled and started: the daemon now starts at login")
    if data.get("error"):
        click.echo(f"warning: {data['error']}", err=True)
    if "enabled" in data and not data["enabled"]:
        click.echo("to enable it: " + "; ".join(data["enable_commands"]))
