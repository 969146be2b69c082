"""`signet connector add|list|sync|remove`: folders of notes kept in sync as documents.

Through the running daemon when one serves the workspace (it reads the folder by absolute path),
else in-process with the document worker run here; either way `add` and `sync` return once what they
queued is indexed. The daemon also syncs every `documents.connector_sync_interval_ms`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from signet.cli.client import Client
from signet.cli.document_commands import SETTLED, wait_indexed
from signet.cli.output import console
from signet.cli.state import CliState, json_and_state

__all__ = ["connector"]


@click.group()
def connector() -> None:
    """Keep folders of notes (an Obsidian vault, say) in sync as documents."""


@connector.command(name="add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", help="A name to show (default: the folder's name).")
@click.option("--project", help="Project the notes' chunks belong to.")
@click.option("--no-sync", is_flag=True, help="Only register it; sync later.")
@json_and_state
def add(state: CliState, path: Path, name: str | None, project: str | None, no_sync: bool) -> None:
    """Connect the folder PATH and sync it."""
    with state.connect() as client:
        # Absolute: the daemon reads the folder itself, from its own working directory.
        data = client.add_connector(str(path.resolve()), name=name, project=project)
        if not no_sync:
            data = {**data, "sync": _sync(client, data["id"])}
    state.show(data, lambda d: click.echo(f"Connected {d['config']['path']} as {d['id']}"
                                          + (f": {_line(d['sync'])}" if "sync" in d else "")))


@connector.command(name="list")
@json_and_state
def list_connectors(state: CliState) -> None:
    """The connectors and their health."""
    state.call(lambda c: c.connectors(), _print_list)


@connector.command(name="sync")
@click.argument("connector_id", metavar="[ID]", required=False)
@json_and_state
def sync(state: CliState, connector_id: str | None) -> None:
    """Sync one connector, or all of them, and index what changed."""
    with state.connect() as client:
        ids = ([connector_id] if connector_id
               else [c["id"] for c in client.connectors()["connectors"] if c.get("enabled", True)])
        data = {"synced": [_sync(client, i) for i in ids]}
    state.show(data, _print_synced)


def _print_synced(data: dict[str, Any]) -> None:
    for report in data["synced"]:
        click.echo(f"{report['connector_id']}: {_line(report)}")


@connector.command(name="enable")
@click.argument("connector_id", metavar="ID")
@json_and_state
def enable(state: CliState, connector_id: str) -> None:
    """Enable a connector imported from a bundle (they arrive disabled), on this host."""
    state.call(lambda c: c.enable_connector(connector_id),
               lambda d: click.echo(f"Enabled {d['id']}: {d['config'].get('path', '')}"))


@connector.command(name="remove")
@click.argument("connector_id", metavar="ID")
@json_and_state
def remove(state: CliState, connector_id: str) -> None:
    """Remove a connector and forget its documents' chunks."""
    state.call(lambda c: c.remove_connector(connector_id),
               lambda d: click.echo(f"Removed {d['id']}; {d['forgotten']} chunk(s) forgotten."))


def _sync(client: Client, connector_id: str) -> dict[str, Any]:
    """Sync, then wait until none of the connector's documents is still on its way."""
    report = client.sync_connector(connector_id)
    wait_indexed(client, report["added"] + report["changed"],
                 lambda: _pending(client.connector(connector_id)))
    return report


def _pending(connector: dict[str, Any]) -> int:
    counts: dict[str, int] = connector["documents"]
    return sum(n for status, n in counts.items() if status not in SETTLED)


def _line(report: dict[str, Any]) -> str:
    return (f"{report['added']} added, {report['changed']} changed, {report['removed']} removed,"
            f" {report['unchanged'] + report['skipped']} unchanged")


def _print_list(data: dict[str, Any]) -> None:
    table = Table()
    for column in ("id", "name", "path", "status", "files", "last sync", "last error"):
        table.add_column(column)
    for c in data["connectors"]:
        table.add_row(c["id"], c["display_name"] or "", c["config"].get("path", ""), c["status"],
                      str(c["files"]), c["last_sync_at"] or "-", c["last_error"] or "")
    console().print(table)
