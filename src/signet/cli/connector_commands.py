"""`signet connector add|list|sync|remove`: folders of notes kept in sync as documents.

In-process like `signet ingest`: `sync` walks the folder (connectors/folder.py) and then runs
the document worker here until everything it queued is indexed, with a progress bar on stderr.
The daemon also syncs every connector every `documents.connector_sync_interval_ms`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from signet.cli.output import console
from signet.cli.pipeline_commands import open_app
from signet.cli.state import CliState, json_option

__all__ = ["connector"]


@click.group()
def connector() -> None:
    """Keep folders of notes (an Obsidian vault, say) in sync as documents."""


@connector.command(name="add")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", help="A name to show (default: the folder's name).")
@click.option("--project", help="Project the notes' chunks belong to.")
@click.option("--no-sync", is_flag=True, help="Only register it; sync later.")
@json_option
@click.pass_obj
def add(state: CliState, path: Path, name: str | None, project: str | None, no_sync: bool) -> None:
    """Connect the folder PATH and sync it."""
    with open_app(state, providers=not no_sync) as app:
        data = app.connectors.add(path, name=name, project=project)
        if not no_sync:
            data = {**data, "sync": _sync(app, data["id"])}
    state.show(data, lambda d: click.echo(f"Connected {d['config']['path']} as {d['id']}"
                                          + (f": {_line(d['sync'])}" if "sync" in d else "")))


@connector.command(name="list")
@json_option
@click.pass_obj
def list_connectors(state: CliState) -> None:
    """The connectors and their health."""
    with open_app(state, providers=False, existing=True) as app:
        data = {"connectors": app.connectors.list()}
    state.show(data, _print_list)


@connector.command(name="sync")
@click.argument("connector_id", metavar="[ID]", required=False)
@json_option
@click.pass_obj
def sync(state: CliState, connector_id: str | None) -> None:
    """Sync one connector, or all of them, and index what changed."""
    with open_app(state, providers=True, existing=True) as app:
        ids = [connector_id] if connector_id else [c["id"] for c in app.connectors.list()]
        data = {"synced": [_sync(app, i) for i in ids]}
    state.show(data, _print_synced)


def _print_synced(data: dict[str, Any]) -> None:
    for report in data["synced"]:
        click.echo(f"{report['connector_id']}: {_line(report)}")


@connector.command(name="remove")
@click.argument("connector_id", metavar="ID")
@json_option
@click.pass_obj
def remove(state: CliState, connector_id: str) -> None:
    """Remove a connector and forget its documents' chunks."""
    with open_app(state, providers=False, existing=True) as app:
        data = app.connectors.remove(connector_id)
    state.show(data, lambda d: click.echo(f"Removed {d['id']}; {d['forgotten']} chunk(s) forgotten."))


def _sync(app: Any, connector_id: str) -> dict[str, Any]:
    report = app.connectors.sync(connector_id).to_dict()
    drain(app, report["added"] + report["changed"])
    return report


def drain(app: Any, total: int) -> None:
    """Run the document worker here until the queue is empty, `total` on the bar."""
    worker = next(w for w in app.workers() if w.name == "documents")
    columns = (TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True,
                  disable=total == 0) as progress:
        task = progress.add_task("documents", total=total)
        while worker.tick(app.clock.now()):
            progress.advance(task)


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
