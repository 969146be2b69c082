"""`signet token create|list|revoke|login-link`: the daemon's API tokens, managed in-process on the
store (a running daemon reads the `tokens` table on every request, so it sees a change at once).
A created token is printed once and stored only as a hash.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli import output
from signet.cli.client import daemon_url
from signet.cli.state import CliState, json_and_state
from signet.daemon.tokens import PERMISSIONS, ROLES, TokenAuthority
from signet.services.store_backend import open_workspace_backend
from signet.store.tokens import TokenRow
from signet.types import utc_now

__all__ = ["token"]


@click.group()
def token() -> None:
    """Create, list and revoke API tokens for the daemon."""


@contextmanager
def open_authority(state: CliState) -> Iterator[TokenAuthority]:
    """The workspace's token authority over its store's tokens and signing key (on a shared
    store, `store.backend: postgres`, the database's, which every daemon on it accepts)."""
    cfg = state.config()
    backend = open_workspace_backend(cfg)
    try:
        yield TokenAuthority.for_core(backend.core)
    finally:
        backend.close()


@token.command()
@click.option("--role", type=click.Choice(list(ROLES)), default="agent", show_default=True,
              help="admin (everything), operator (all but admin), agent, readonly.")
@click.option("--permissions", default=None, metavar="P1,P2",
              help=f"Fewer permissions than the role gives ({', '.join(PERMISSIONS)}).")
@click.option("--project", default=None, help="Scope: only memories of this project.")
@click.option("--agent", default=None, help="Scope: only memories of this agent id.")
@click.option("--ttl-days", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Lifetime in days (default: auth.token_ttl_days).")
@click.option("--name", default="", help="A label shown by `signet token list`.")
@json_and_state
def create(
    state: CliState, role: str, permissions: str | None, project: str | None, agent: str | None,
    ttl_days: float | None, name: str,
) -> None:
    """Issue a token; it is printed once and cannot be shown again."""
    days = ttl_days if ttl_days is not None else state.config().auth.token_ttl_days
    perms = permissions.split(",") if permissions is not None else None
    with open_authority(state) as authority:
        issued = authority.issue(
            role=role, name=name, permissions=perms, project=project, agent=agent,
            ttl=timedelta(days=days),
        )
    data = {**_row(issued.row), "token": issued.token}
    state.show(data, _print_created)


@token.command("list")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked tokens.")
@json_and_state
def list_tokens(state: CliState, include_revoked: bool) -> None:
    """The issued tokens (never their secret part)."""
    with open_authority(state) as authority:
        rows = authority.list(include_revoked=include_revoked)
    # {"items": [...]}, as every other list answers.
    state.show({"items": [_row(r) for r in rows]}, _print_list)


@token.command()
@click.argument("token_id")
@json_and_state
def revoke(state: CliState, token_id: str) -> None:
    """Revoke a token by id; a running daemon refuses it from the next request on."""
    with open_authority(state) as authority:
        authority.revoke(token_id)
    state.show({"revoked": token_id}, lambda d: click.echo(f"revoked {d['revoked']}"))


@token.command("login-link")
@json_and_state
def login_link(state: CliState) -> None:
    """Print a one-time dashboard login link (valid five minutes, works once)."""
    cfg = state.config()
    with open_authority(state) as authority:
        code = authority.login_code()
    url = f"{daemon_url(cfg)}/app/login?code={code}"  # sets the session cookie, opens the app
    state.show({"url": url, "expires_in_s": 300}, lambda d: click.echo(d["url"]))


def _row(row: TokenRow) -> dict[str, Any]:
    return {
        "id": row.id, "name": row.name, "role": row.role, "permissions": list(row.permissions),
        "scope_project": row.scope_project, "scope_agent": row.scope_agent,
        "created_at": row.created_at, "expires_at": row.expires_at,
        "revoked_at": row.revoked_at, "last_used_at": row.last_used_at,
    }


def _print_created(data: dict[str, Any]) -> None:
    click.echo(data["token"])
    scope = ", ".join(f"{k} {data[f'scope_{k}']}" for k in ("project", "agent")
                      if data[f"scope_{k}"]) or "all memories"
    click.echo(
        f"id {data['id']}, role {data['role']}, {scope}, expires {data['expires_at']}"
        " - shown once: store it now", err=True,
    )


def _minute(ts: str | None) -> str | None:
    return ts[:16].replace("T", " ") if ts else None


def _state(t: dict[str, Any], now: str) -> str:
    if t["revoked_at"]:
        return "revoked"
    return "expired" if t["expires_at"] and t["expires_at"] <= now else "live"


def _print_list(data: dict[str, Any]) -> None:
    now = utc_now()
    table = Table(box=None)
    table.add_column("id", no_wrap=True, min_width=20)  # whole: `signet token revoke ID` needs it
    for column in ("name", "role", "scope", "expires", "last used", "state"):
        table.add_column(column)
    for t in data["items"]:
        scope = "/".join(x for x in (t["scope_project"], t["scope_agent"]) if x) or "-"
        table.add_row(
            Text(t["id"]), Text(t["name"]), Text(t["role"]), Text(scope),
            Text(_minute(t["expires_at"]) or "never"), Text(_minute(t["last_used_at"]) or "-"),
            Text(_state(t, now)),
        )
    output.console().print(table)
