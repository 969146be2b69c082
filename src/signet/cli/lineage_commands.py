"""`signet threads list|show`, `signet lineage ID`, `signet artifacts reindex`, `signet memory
synthesize`: the lineage tiers from the shell (docs/sessions.md).

Through the running daemon when one serves the workspace, else in-process (`state.connect()`,
cli/client.py); either way the workspace must exist already.
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli.output import console
from signet.cli.state import CliState, json_and_state

__all__ = ["artifacts", "lineage", "memory", "threads"]


@click.group()
def threads() -> None:
    """Thread heads: per-topic summaries rolled into arcs and epochs."""


@threads.command(name="list")
@json_and_state
def list_threads(state: CliState) -> None:
    """Threads, most recently active first (--json: {"items": [...]})."""
    state.call(lambda c: c.threads(), _print_threads)


@threads.command(name="show")
@click.argument("thread")
@json_and_state
def show_thread(state: CliState, thread: str) -> None:
    """THREAD's head ("project:NAME" or "general"): newest epoch, later arcs and summaries."""
    state.call(lambda c: c.thread(thread), lambda d: console().print(Text(d["head"])))


@click.command()
@click.argument("ref", metavar="ID")
@json_and_state
def lineage(state: CliState, ref: str) -> None:
    """Where memory, session or artifact ID comes from and what condenses it."""
    state.call(lambda c: c.lineage(ref), _print_lineage)


@click.group()
def artifacts() -> None:
    """The markdown artifacts (session summaries, arcs, epochs) and their index."""


@artifacts.command(name="reindex")
@json_and_state
def reindex(state: CliState) -> None:
    """Rebuild the artifact index from the markdown files alone (tombstones honoured)."""
    state.call(lambda c: c.reindex_artifacts(), lambda d: console().print(Text(
        f"indexed {d['indexed']}, removed {d['removed']}, skipped {d['tombstoned']} tombstoned"
        + "".join(f"\nerror: {e}" for e in d["errors"])
    )))


@click.group()
def memory() -> None:
    """The global head: MEMORY.md, rendered from the memory database."""


@memory.command(name="synthesize")
@json_and_state
def synthesize(state: CliState) -> None:
    """Render MEMORY.md now, within sessions.memory_md_budget_tokens; the old one is backed up."""
    state.call(lambda c: c.synthesize_memory_md(), lambda d: console().print(Text(
        f"{d['path']}: {d['items']} items, {d['tokens']}/{d['budget']} tokens"
        + (f", backup {d['backup']}" if d["backup"] else "")
    )))


def _print_threads(data: dict[str, Any]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("thread", "summaries", "arcs", "epochs", "last"):
        table.add_column(column, no_wrap=True)
    for t in data["items"]:
        table.add_row(Text(t["thread"]), str(t["summaries"]), str(t["arcs"]), str(t["epochs"]),
                      (t["last"] or "")[:16])
    console().print(table)


def _print_lineage(data: dict[str, Any]) -> None:
    out = console()
    node = data["node"]
    out.print(Text(f"{node['kind']} {node.get('id')}"))
    for item in data["up"]:
        out.print(Text(f"  up   {item['kind']} {item.get('path') or item.get('id')}"))
    for item in data["down"]:
        out.print(Text(f"  down {item['kind']} {item.get('path') or item.get('id')}"))
