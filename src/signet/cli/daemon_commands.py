"""`signet daemon start [--foreground] | stop | status | logs`: thin wrappers over the lifecycle.

The process management itself (pid file, detaching, signals, log files) lives in
`signet.daemon.lifecycle`. It is imported inside each command, not at the top: it pulls in the
web stack, which the memory commands never need, and the CLI must start fast.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from types import ModuleType

import click

from signet.cli import output
from signet.cli.client import daemon_url
from signet.cli.state import CliState, json_option
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
@json_option
@click.pass_obj
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
@json_option
@click.pass_obj
def stop(state: CliState, timeout: float) -> None:
    """Stop the running daemon."""
    stopped = lifecycle().stop(state.config(), timeout_s=timeout)
    state.show(
        {"stopped": stopped},
        lambda d: click.echo("Daemon stopped" if d["stopped"] else "No daemon was running"),
    )


@daemon.command(name="status")
@json_option
@click.pass_obj
def daemon_status(state: CliState) -> None:
    """Whether the daemon runs, its pid, port and uptime."""
    state.show(lifecycle().status(state.config()), output.print_daemon_status)


@daemon.command()
@click.option("-n", "--lines", type=click.IntRange(min=1), default=50, show_default=True)
@json_option
@click.pass_obj
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
