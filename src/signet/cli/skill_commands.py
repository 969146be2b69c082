"""`signet skill list|show|install|remove`: skills as procedural memory, through the daemon or in-
process (with the embedder, never the LLM). skills/ is reconciled with the database first, so a
hand edit is seen at once. Installing takes a local folder or archive; there is no network
catalogue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli.output import console, print_mapping
from signet.cli.state import CliState, json_and_state

__all__ = ["skill"]


@click.group()
def skill() -> None:
    """Install and inspect skills (folders under skills/ with a SKILL.md)."""


@skill.command("list")
@json_and_state
def list_skills(state: CliState) -> None:
    """The installed skills, their use counts and ranking importance."""
    state.call(lambda c: c.skills(), _print_list)


@skill.command("show")
@click.argument("name")
@json_and_state
def show(state: CliState, name: str) -> None:
    """One skill: its description, role, use and instructions."""
    state.call(lambda c: c.skill(name), _print_skill)


@skill.command("install")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace an installed skill of the same name.")
@json_and_state
def install(state: CliState, path: Path, force: bool) -> None:
    """Install the skill in PATH: a folder with a SKILL.md, or a .zip/.tar.gz of one."""
    with state.connect() as client:
        # Absolute: the daemon reads the folder itself, from its own working directory.
        data = client.install_skill(str(path.resolve()), force=force)
    state.show(data, lambda d: click.echo(f"installed skill {d['installed']} at {d['path']}"))


@skill.command("remove")
@click.argument("name")
@json_and_state
def remove(state: CliState, name: str) -> None:
    """Delete skill NAME's folder; its memory is forgotten (recoverable) and its row dropped."""
    state.call(lambda c: c.remove_skill(name),
               lambda d: click.echo(f"removed skill {d['removed']}"))


def _print_list(data: dict[str, Any]) -> None:
    for error in data["errors"]:
        click.echo(f"warning: {error}", err=True)
    if not data["skills"]:
        click.echo("no skills installed")
        return
    table = Table(box=None)
    for column in ("name", "role", "uses", "last used", "importance"):
        table.add_column(column)
    for s in data["skills"]:
        table.add_row(
            Text(s["name"]), Text(s["role"] or "-"), Text(str(s["use_count"])),
            Text((s["last_used_at"] or "never")[:16]),
            Text("-" if s["importance"] is None else f"{s['importance']:.2f}"),
        )
    console().print(table)


def _print_skill(data: dict[str, Any]) -> None:
    print_mapping({k: data[k] for k in ("name", "description", "role", "path", "use_count",
                                        "last_used_at", "importance", "memory_id")})
    click.echo()
    click.echo(data["instructions"])
