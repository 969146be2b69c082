"""`signet setup`: `signet init`, `signet connect` for each harness found on this machine (or named
with `--harness`), and `signet daemon install`. Each step is idempotent, so it may be run again.
"""

from __future__ import annotations

import os

import click

from signet.cli.connect_command import connect_harness
from signet.cli.daemon_commands import install_service, print_service
from signet.cli.harness_targets import HARNESSES, installed_harnesses
from signet.cli.state import CliState
from signet.cli.workspace_commands import initialise

__all__ = ["setup"]


@click.command()
@click.option("--harness", "harnesses", multiple=True, type=click.Choice(HARNESSES),
              help="Connect this harness (repeatable); default: every one found on this machine.")
@click.option("--allow-tools", is_flag=True, help="claude-code: allow the signet MCP tools without asking.")
@click.option("--no-service", is_flag=True, help="Install no user service for the daemon.")
@click.option("--no-enable", is_flag=True, help="Write the service file but enable nothing.")
@click.pass_obj
def setup(
    state: CliState, harnesses: tuple[str, ...], allow_tools: bool, no_service: bool,
    no_enable: bool,
) -> None:
    """Set up Signet in one step: init, connect the harnesses found, install the daemon's
    user service."""
    report = initialise(state)
    click.echo(f"workspace {report['workspace']}: {len(report['created'])} created, "
               f"{len(report['kept'])} kept")
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    chosen = list(harnesses) or installed_harnesses(os.environ)
    if not chosen:
        click.echo("no harness found (claude, codex, opencode, cursor); connect one later with"
                   " `signet connect <harness>`")
    for harness in chosen:
        for line in connect_harness(state, harness, allow_tools=allow_tools):
            click.echo(line)
    if not no_service:
        print_service(install_service(state, None, enable=not no_enable))
