"""`signet init` lays out the workspace without a daemon or configuration, never overwriting a file,
then opens the store once to migrate it and makes the auth secret and the admin token
(`.daemon/token`, 0600). `signet status` reports it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from signet.cli import output
from signet.cli.hook_health import hook_health
from signet.cli.state import CliState, json_and_state
from signet.config import resolve_workspace
from signet.workspace import init_workspace

__all__ = ["COMMANDS"]


@click.command()
@click.option(
    "--path", type=click.Path(path_type=Path), default=None,
    help="Where to create the workspace (default: the global workspace).",
)
@json_and_state
def init(state: CliState, path: Path | None) -> None:
    """Create the workspace (directories, agent.yaml, identity files, database) if missing."""
    report = initialise(state, path)
    for warning in report["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    state.show(report, output.print_init)


def initialise(state: CliState, path: Path | None = None) -> dict[str, Any]:
    """`signet init`'s work (also the first step of `signet setup`): what was created, what
    was kept."""
    root = resolve_workspace(path if path is not None else state.workspace, os.environ)
    report = init_workspace(root)
    state.workspace = root
    cfg = state.config()
    database_existed = cfg.db_path.exists()
    # Imported here: opening the store pulls in numpy and recall, which `--help` must not pay.
    from signet.app import SignetApp
    from signet.daemon.tokens import TokenAuthority, ensure_install_token

    token_existed = cfg.token_path.exists()
    with SignetApp.open(cfg, embedder=None) as app:
        wrote_token = ensure_install_token(
            cfg, TokenAuthority.for_core(app.token_authority_store(), app.clock)
        )
        database = app.backend.file()  # None: a shared store is no file of the workspace's
    created = [str(p) for p in report.created]
    kept = [str(p) for p in report.kept]
    if database is not None:
        (kept if database_existed else created).append(str(database))
    (created if wrote_token or not token_existed else kept).append(str(cfg.token_path))
    return {"workspace": str(root), "created": created, "kept": kept,
            "warnings": list(report.warnings)}


@click.command()
@json_and_state
def status(state: CliState) -> None:
    """Show the workspace, the database, the embedder and whether a daemon serves them.

    Also the harness hooks' failures of the last 24 h and the capture spool's backlog."""
    with state.connect() as client:
        data = dict(client.status())
    # The hooks' failures and the capture spool are files of the workspace this CLI reads.
    data["hooks"] = hook_health(state.config().workspace)
    state.show(data, output.print_status)


COMMANDS: tuple[click.Command, ...] = (init, status)
