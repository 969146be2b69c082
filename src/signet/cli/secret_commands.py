"""`signet secret set|get|list|delete|rotate-key`: the workspace's encrypted secret store.

They act on the workspace's files directly: whoever can run them could read the key file anyway. A
value never comes from argv (shell history and `ps` would see it); `get` prints one only with
`--reveal`. The daemon resolves `secret:NAME` at start, so it sees a change after a restart.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli import output
from signet.cli.state import CliState, json_and_state
from signet.errors import InvalidInput, NotFound
from signet.secret_store import SecretStore
from signet.types import utc_now

__all__ = ["secret"]


@click.group()
def secret() -> None:
    """Store API keys and URLs encrypted; reference them in agent.yaml as secret:NAME."""


def _store(state: CliState) -> SecretStore:
    return SecretStore(state.config().workspace)


@secret.command("set")
@click.argument("name")
@json_and_state
def set_secret(state: CliState, name: str) -> None:
    """Set NAME to a value read from stdin, or typed at a hidden prompt (never an argument)."""
    store = _store(state)
    info = store.set(name, _read_value(name), utc_now())
    state.show(info.to_dict(), lambda d: click.echo(f"stored secret {d['name']}"))


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        value = click.prompt(f"value for {name}", hide_input=True, confirmation_prompt=True)
    else:
        value = sys.stdin.read()
        # A value piped with `echo` ends in a newline that is not part of the key.
        value = value[:-2] if value.endswith("\r\n") else value.removesuffix("\n")
    if not value:
        raise InvalidInput("empty value: nothing stored")
    return str(value)


@secret.command("get")
@click.argument("name")
@click.option("--reveal", is_flag=True, help="Print the value (required: it is never shown by default).")
@json_and_state
def get_secret(state: CliState, name: str, reveal: bool) -> None:
    """Print NAME's value; only with --reveal."""
    if not reveal:
        raise InvalidInput(f"refusing to print secret {name!r} without --reveal")
    value = _store(state).get(name)
    state.show({"name": name, "value": value}, lambda d: click.echo(d["value"]))


@secret.command("list")
@json_and_state
def list_secrets(state: CliState) -> None:
    """The stored secrets' names and dates (never their values)."""
    infos = _store(state).names()
    state.show({"secrets": [i.to_dict() for i in infos]}, _print_list)


@secret.command("delete")
@click.argument("name")
@json_and_state
def delete_secret(state: CliState, name: str) -> None:
    """Delete NAME."""
    if not _store(state).delete(name):
        raise NotFound(f"no secret named {name!r}")
    state.show({"deleted": name}, lambda d: click.echo(f"deleted secret {d['deleted']}"))


@secret.command("rotate-key")
@json_and_state
def rotate_key(state: CliState) -> None:
    """Make a new encryption key and re-encrypt every secret under it."""
    count = _store(state).rotate_key()
    state.show({"reencrypted": count},
               lambda d: click.echo(f"new key; {d['reencrypted']} secret(s) re-encrypted"))


def _print_list(data: dict[str, Any]) -> None:
    if not data["secrets"]:
        click.echo("no secrets stored")
        return
    table = Table(box=None)
    for column in ("name", "created", "updated"):
        table.add_column(column)
    for s in data["secrets"]:
        table.add_row(Text(s["name"]), Text(s["created_at"][:16]), Text(s["updated_at"][:16]))
    output.console().print(table)
