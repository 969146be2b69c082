"""`signet export PATH`, `signet import PATH [--from signet|mem0|markdown]`, `signet backup [PATH]`.

`import` writes, so it goes to the daemon when one serves the workspace and runs in-process only
otherwise. `export` and `backup` only read, in-process either way: export reads one consistent
snapshot of either backend; backup uses SQLite's online backup API and is refused on PostgreSQL,
where pg_dump backs up a shared database (docs/deploy.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from signet.cli.client import LocalClient
from signet.cli.pipeline_commands import open_app
from signet.cli.state import CliState, json_and_state

__all__ = ["backup", "export", "import_"]


def _progress(what: str, n: int) -> None:
    click.echo(f"  {what}: {n}", err=True)


@click.command()
@click.argument("path", type=click.Path(path_type=Path))
@json_and_state
def export(state: CliState, path: Path) -> None:
    """Write a portable bundle (memories with history, graph, documents, sessions, identity
    files, config without secrets) to the folder PATH."""
    from signet.portable.bundle import export_bundle

    with open_app(state, providers=False, existing=True) as app:
        manifest = export_bundle(app.portable, app.config.workspace, path, _progress)
    state.show({"path": str(path), **manifest}, lambda d: click.echo(
        f"Exported {d['tables'].get('memories', 0)} memories to {d['path']}"))


@click.command(name="import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--from", "source", type=click.Choice(["signet", "mem0", "markdown"]),
              default="signet", show_default=True, help="The format of PATH.")
@click.option("--project", help="Project for memories from mem0 or markdown.")
@json_and_state
def import_(state: CliState, path: Path, source: str, project: str | None) -> None:
    """Import a Signet export folder, a mem0 JSON export, or a folder of markdown notes."""
    with state.connect() as client:
        # Absolute: a daemon reads it itself, from its own working directory.
        target = str(path.resolve())
        if isinstance(client, LocalClient):
            data = client.import_from(target, source=source, project=project,
                                      progress=_progress)
        else:
            data = client.import_from(target, source=source, project=project)
    state.show(data, _print_import)


def _print_import(data: dict[str, Any]) -> None:
    if "inserted" in data:
        click.echo(f"Imported {data['inserted'].get('memories', 0)} memories"
                   f" ({data['deduped_memories']} already held).")
    else:
        click.echo(f"Imported {data['imported']} of {data['read']}"
                   f" ({data['deduped']} already held, {len(data['refused'])} refused).")
        for reason in data["refused"]:
            click.echo(f"refused: {reason}", err=True)


@click.command()
@click.argument("path", type=click.Path(path_type=Path), required=False)
@json_and_state
def backup(state: CliState, path: Path | None) -> None:
    """Copy the database consistently while the daemon runs (default:
    <workspace>/backups/memories-<time>.db)."""
    from signet.errors import NotOnBackend
    from signet.portable.bundle import backup as take_backup

    with open_app(state, providers=False, existing=True) as app:
        if app.backend.file() is None:  # the online backup API copies a file
            raise NotOnBackend("backup", app.backend.name, message="signet backup copies the"
                               f" workspace's SQLite file; the {app.backend.name} store is a"
                               " shared database: back it up with pg_dump (docs/deploy.md)")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = path or app.config.workspace / "backups" / f"memories-{stamp}.db"
        data = take_backup(app.store, target)
    state.show(data, lambda d: click.echo(f"Backed up {d['bytes']} bytes to {d['path']}"))
