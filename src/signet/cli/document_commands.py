"""`signet ingest PATH|URL|-`: documents into memory, with a progress bar on stderr.

A folder is walked for markdown, text, HTML and PDF files (hidden folders skipped); `-` reads stdin;
a URL is fetched when `documents.url_fetch_enabled`. With a daemon the documents are registered with
it and the command waits for its worker; without one the worker runs here. Either way the chunks are
recallable when it returns. An unchanged file is a no-op; a changed one replaces its chunks.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from signet.cli.client import Client, LocalClient
from signet.cli.state import CliState, json_and_state
from signet.connectors.folder import note_files
from signet.errors import SignetError

__all__ = ["COMMANDS", "documents", "ingest", "wait_indexed"]

# How often the command asks the daemon how its documents are doing.
POLL_S = 0.2
SETTLED = ("done", "failed")

JSON = dict[str, Any]


@click.command()
@click.argument("source", metavar="PATH|URL|-")
@click.option("--title", help="Title of the document (a single file, URL or stdin).")
@click.option("--project", help="Project the chunks belong to.")
@json_and_state
def ingest(state: CliState, source: str, title: str | None, project: str | None) -> None:
    """Ingest a file, a folder (recursively), a URL or stdin as document chunks."""
    refused: list[dict[str, Any]] = []
    with state.connect() as client:
        registered = _register(client, source, title, project, refused)
        queued = [r["id"] for r in registered if r["outcome"] != "unchanged"]
        _wait(client, queued)
        final = [client.document(r["id"]) for r in registered]
    summary = _summary(registered, final, refused)
    state.show(summary, _print_summary)
    if summary["failed"]:
        sys.exit(1)


def _register(
    client: Client, source: str, title: str | None, project: str | None,
    refused: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    if source == "-":
        return [client.ingest_document(content=sys.stdin.read(), title=title, project=project)]
    if source.startswith(("http://", "https://")):
        return [client.ingest_document(url=source, title=title, project=project)]
    path = Path(source)
    if path.is_dir():
        links_out: list[str] = []
        files = note_files(path, links_out)
        refused.extend({"id": None, "source": str(path / rel),
                        "error": "a link out of the folder: skipped"} for rel in links_out)
        if not files:
            raise click.ClickException(f"no markdown, text, HTML or PDF files under {path}")
        # One file refused (too large, unreadable) must not strand the rest of the folder
        # registered but never indexed: it is reported with the failures.
        registered = []
        for file in files:
            try:
                registered.append(_ingest_file(client, file, None, project))
            except SignetError as exc:
                refused.append({"id": None, "source": str(file), "error": exc.message})
        return registered
    return [_ingest_file(client, path, title, project)]


def _ingest_file(client: Client, path: Path, title: str | None, project: str | None) -> JSON:
    # Absolute: the daemon reads the file itself, from its own working directory.
    return client.ingest_document(path=str(path.resolve()), title=title, project=project)


def _wait(client: Client, queued: list[str]) -> None:
    """Until every queued document is done or failed (only those still on their way asked)."""
    left = list(queued)

    def pending() -> int:
        nonlocal left
        left = [d for d in left if client.document(d)["status"] not in SETTLED]
        return len(left)

    wait_indexed(client, len(queued), pending)


def wait_indexed(client: Client, total: int, pending: Callable[[], int]) -> None:
    """Until `pending()` (documents still on their way) is 0, `total` on a bar on stderr: the
    daemon's worker indexes them (asked every POLL_S), or, in-process, the worker runs here."""
    columns = (TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True,
                  disable=total == 0) as progress:
        task = progress.add_task("documents", total=total)
        if isinstance(client, LocalClient):
            while client.work("documents"):
                progress.advance(task)
            return
        while left := pending():
            progress.update(task, completed=max(0, total - left))
            time.sleep(POLL_S)


def _summary(
    registered: list[dict[str, Any]], final: list[dict[str, Any]], refused: list[dict[str, Any]]
) -> dict[str, Any]:
    outcomes = [r["outcome"] for r in registered]
    failed = refused + [{"id": d["id"], "source": d["source_url"] or d["title"], "error": d["error"]}
                        for d in final if d["status"] == "failed"]
    return {
        "documents": len(final), "unchanged": outcomes.count("unchanged"),
        "done": sum(d["status"] == "done" for d in final), "failed": failed,
        "chunks": sum(len(d["chunks"]) for d in final),
        "items": [{"id": d["id"], "title": d["title"], "status": d["status"],
                   "chunks": len(d["chunks"]), "source": d["source_url"]} for d in final],
    }


def _print_summary(data: dict[str, Any]) -> None:
    click.echo(f"{data['done']} of {data['documents']} document(s) done"
               f" ({data['unchanged']} unchanged), {data['chunks']} chunk(s).")
    for item in data["failed"]:
        click.echo(f"failed: {item['source']}: {item['error']}", err=True)


COMMANDS = (ingest,)


@click.group()
def documents() -> None:
    """List, show and delete ingested documents."""


@documents.command(name="list")
@click.option("--status", help="Only documents in this state (queued ... done, failed).")
@click.option("--limit", type=int, default=50, show_default=True)
@json_and_state
def list_documents(state: CliState, status: str | None, limit: int) -> None:
    """Documents, newest first, with their status and chunk counts."""
    state.call(lambda c: c.documents(status=status, limit=limit), _print_documents)


@documents.command(name="show")
@click.argument("document_id", metavar="ID")
@json_and_state
def show_document(state: CliState, document_id: str) -> None:
    """One document: source, status, error and its chunk memories in order."""
    state.call(lambda c: c.document(document_id), lambda d: click.echo(
        f"{d['id']}  {d['status']}  {d['title'] or '-'}  {d['source_url'] or d['source_type']}\n"
        + (f"error: {d['error']}\n" if d["error"] else "")
        + "\n".join(f"  {c['chunk_index']:>4}  {c['memory_id']}" for c in d["chunks"])))


@documents.command(name="delete")
@click.argument("document_id", metavar="ID")
@json_and_state
def delete_document(state: CliState, document_id: str) -> None:
    """Delete a document and forget its chunks (recoverable within the tombstone window)."""
    state.call(lambda c: c.delete_document(document_id),
               lambda d: click.echo(f"Deleted {d['id']}; {d['forgotten']} chunk(s) forgotten."))


def _print_documents(data: dict[str, Any]) -> None:
    from rich.table import Table

    from signet.cli.output import console

    table = Table(title=f"{data['total']} document(s)")
    for column in ("id", "status", "title", "source", "chunks", "updated"):
        table.add_column(column)
    for d in data["items"]:
        table.add_row(d["id"], d["status"], d["title"] or "", d["source_url"] or d["source_type"],
                      str(d["chunk_count"]), d["updated_at"])
    console().print(table)
