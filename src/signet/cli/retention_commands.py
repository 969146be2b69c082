"""`signet retention run [--dry-run]`: one retention sweep now (what the daemon runs every
`retention.intervalMs`), through the daemon or in-process. `--dry-run` writes nothing.
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from signet.cli.output import console
from signet.cli.state import CliState, json_and_state

__all__ = ["COMMANDS"]


@click.group()
def retention() -> None:
    """Purge expired tombstones, history, finished jobs, cold rows and idempotency keys."""


@retention.command(name="run")
@click.option("--dry-run", is_flag=True, help="Count what would be purged; change nothing.")
@json_and_state
def run_retention(state: CliState, dry_run: bool) -> None:
    """Run one sweep of the retention steps, in order, each capped at batchLimit."""
    state.call(lambda c: c.run_retention(dry_run=dry_run), _print_report)


def _print_report(data: dict[str, Any]) -> None:
    verb = "would purge" if data["dry_run"] else "purged"
    table = Table(title=f"Retention sweep at {data['now']}: {verb} {data['total']} row(s)")
    table.add_column("step")
    table.add_column("rows", justify="right")
    for step, count in data["steps"].items():
        table.add_row(step, str(count))
    console().print(table)
    if data["entities_removed"]:
        click.echo(f"Orphan entities removed: {data['entities_removed']}")


COMMANDS = (retention,)
