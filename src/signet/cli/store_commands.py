"""`signet store migrate --to URL | --from URL`: copy this workspace's SQLite store into PostgreSQL,
or a PostgreSQL store back (store/postgres/copy_tables.py says what is copied, and what is not
and why). Run with the daemon stopped (or on a `signet backup`); it exits non-zero when a
table's count or hash differs, or the target holds another signing key.
"""

from __future__ import annotations

import os
from typing import Any

import click
from rich.table import Table

from signet.cli.output import console
from signet.cli.state import CliState, json_and_state
from signet.errors import StoreError

__all__ = ["COMMANDS"]


@click.group()
def store() -> None:
    """Move the store between backends (SQLite <-> PostgreSQL)."""


@store.command(name="migrate")
@click.option("--to", "url", default=None, metavar="URL",
              help="Copy into this postgresql://... (default: $SIGNET_STORE_URL).")
@click.option("--from", "source", default=None, metavar="URL",
              help="Copy from this postgresql://... into the workspace's SQLite instead.")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 100_000),
              help="Rows per transaction.")
@json_and_state
def migrate(state: CliState, url: str | None, source: str | None, batch: int) -> None:
    """Copy memories, history, vectors, sessions, documents, the graph, feedback, skills,
    idempotency keys, jobs, tokens and the signing key; verify; resumable."""
    from signet.services.store_copy import migrate_to_postgres, migrate_to_sqlite

    if url and source:
        raise click.UsageError("give --to or --from, not both")
    target = source or url or os.environ.get("SIGNET_STORE_URL", "")
    if not target.startswith(("postgresql://", "postgres://")):
        raise click.UsageError(
            f"{'--from' if source else '--to'} needs a postgresql:// URL (or set SIGNET_STORE_URL)"
        )

    def progress(table: str, done: int, total: int) -> None:
        click.echo(f"store migrate: {table} {done}/{total}", err=True)

    if source:
        report = migrate_to_sqlite(state.config(), target, batch=batch, progress=progress)
    else:
        report = migrate_to_postgres(state.existing_config(), target, batch=batch,
                                     progress=progress)
    state.show({**report.to_dict(), "direction": "from" if source else "to"}, _print_report)
    if not report.ok:
        raise StoreError(
            "store migrate: the copy does not match"
            + (f" (tables: {', '.join(report.mismatched)})" if report.mismatched else "")
            + (" (the target holds another signing key)" if report.signing_key == "differs"
               else "")
        )


def _print_report(data: dict[str, Any]) -> None:
    arrow = "PostgreSQL -> SQLite" if data["direction"] == "from" else "SQLite -> PostgreSQL"
    table = Table(title=arrow + (" (verified)" if data["ok"] else " (MISMATCH)"))
    for column in ("table", "copied now", "sqlite rows", "postgres rows", "hash"):
        table.add_column(column)
    for name, counts in data["counts"].items():
        table.add_row(name, str(data["copied"].get(name, 0)), str(counts["sqlite"]),
                      str(counts["postgres"]),
                      "differs" if name in data["mismatched"] else "equal")
    console().print(table)
    console().print(f"signing key: {data['signing_key']}")
    source, target = ("PostgreSQL", "SQLite") if data["direction"] == "from" else (
        "SQLite", "PostgreSQL")
    absent = set(data["no_target_table"])
    kept = {k: v for k, v in data["left_behind"].items() if k not in absent}
    gone = {k: v for k, v in data["left_behind"].items() if k in absent}
    why = data["why_not_copied"]
    if kept:
        console().print(f"not copied, rows stay in {source} ({target} has the table): "
                        + _rows(kept, why))
    if gone:
        console().print(f"not copied, rows stay in {source} (no such table on {target}): "
                        + _rows(gone, why))


def _rows(tables: dict[str, int], why: dict[str, str]) -> str:
    return "; ".join(f"{name} ({rows} rows; {why.get(name, '')})" for name, rows in tables.items())


COMMANDS = [store]
