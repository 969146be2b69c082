"""`signet store migrate --to URL`: copy this workspace's SQLite store into PostgreSQL.

Runs in this process against the workspace's database (stop the daemon first, or copy a
`signet backup`); progress per table goes to stderr, the verification report to stdout. Exits
non-zero when a table's count or hash differs, or when the target already holds another
signing key.
"""

from __future__ import annotations

import os
from typing import Any

import click
from rich.table import Table

from signet.cli.output import console
from signet.cli.state import CliState, json_option
from signet.errors import StoreError

__all__ = ["COMMANDS"]


@click.group()
def store() -> None:
    """Move the store between backends (SQLite -> PostgreSQL)."""


@store.command(name="migrate")
@click.option("--to", "url", default=None, metavar="URL",
              help="postgresql://... (default: $SIGNET_STORE_URL).")
@click.option("--batch", default=1000, show_default=True, type=click.IntRange(1, 100_000),
              help="Rows per transaction.")
@json_option
@click.pass_obj
def migrate(state: CliState, url: str | None, batch: int) -> None:
    """Copy memories, history, vectors, jobs, tokens and the signing key; verify; resumable."""
    from signet.services.store_copy import migrate_to_postgres

    target = url or os.environ.get("SIGNET_STORE_URL", "")
    if not target.startswith(("postgresql://", "postgres://")):
        raise click.UsageError("--to needs a postgresql:// URL (or set SIGNET_STORE_URL)")

    def progress(table: str, done: int, total: int) -> None:
        click.echo(f"store migrate: {table} {done}/{total}", err=True)

    report = migrate_to_postgres(state.existing_config(), target, batch=batch, progress=progress)
    state.show(report.to_dict(), _print_report)
    if not report.ok:
        raise StoreError(
            "store migrate: the copy does not match"
            + (f" (tables: {', '.join(report.mismatched)})" if report.mismatched else "")
            + (" (the target holds another signing key)" if report.signing_key == "differs"
               else "")
        )


def _print_report(data: dict[str, Any]) -> None:
    table = Table(title="SQLite -> PostgreSQL" + (" (verified)" if data["ok"] else " (MISMATCH)"))
    for column in ("table", "copied now", "sqlite rows", "postgres rows", "hash"):
        table.add_column(column)
    for name, counts in data["counts"].items():
        table.add_row(name, str(data["copied"].get(name, 0)), str(counts["sqlite"]),
                      str(counts["postgres"]),
                      "differs" if name in data["mismatched"] else "equal")
    console().print(table)
    console().print(f"signing key: {data['signing_key']}")
    if data["left_behind"]:
        left = ", ".join(f"{k} ({v})" for k, v in data["left_behind"].items())
        console().print(f"left in SQLite (not on PostgreSQL yet): {left}")


COMMANDS = [store]
