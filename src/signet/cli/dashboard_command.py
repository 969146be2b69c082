"""`signet dashboard [--print]`: log in to the dashboard the daemon serves, by opening (or printing)
a one-time login link (five minutes, works once) made in-process in the workspace's store.
Following it sets the session cookie; the daemon must be running to serve the pages.
"""

from __future__ import annotations

import webbrowser

import click

from signet.cli.client import daemon_url, is_running
from signet.cli.state import CliState, json_and_state
from signet.cli.token_commands import open_authority
from signet.errors import SignetError

__all__ = ["dashboard"]


@click.command()
@click.option("--print", "print_only", is_flag=True, help="Print the login link, do not open a browser.")
@json_and_state
def dashboard(state: CliState, print_only: bool) -> None:
    """Open the dashboard in a browser, logged in by a one-time link."""
    cfg = state.config()
    if not is_running(cfg):
        raise SignetError(
            f"no daemon of this workspace answers at {daemon_url(cfg)}; start it with"
            " `signet daemon start`"
        )
    with open_authority(state) as authority:  # the workspace's store, or the shared one
        code = authority.login_code()
    url = f"{daemon_url(cfg)}/app/login?code={code}"
    opened = False if print_only or state.json else webbrowser.open(url)
    state.show({"url": url, "expires_in_s": 300, "opened": opened}, lambda d: _say(d))


def _say(data: dict[str, object]) -> None:
    if data["opened"]:
        click.echo("opened the dashboard in your browser (the link works once, for five minutes)",
                   err=True)
    else:
        click.echo(data["url"])
