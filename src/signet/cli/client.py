"""How the CLI reaches the memory: through a running daemon, or in-process when none runs.

Both `Client`s return the JSON of the HTTP contract, so `--json` and the formatters see one shape.
`connect(cfg)` asks `GET /health`: a daemon whose pid is this workspace's gets every call, otherwise
`LocalClient` opens the store. `SIGNET_DAEMON_URL` (with `SIGNET_TOKEN`) sends calls elsewhere; the
workspace's own admin token goes only to its own daemon or a loopback address.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import TypeAlias
from urllib.parse import urlsplit

from signet.client.local import ACTOR_NAME, LocalClient, require_workspace
from signet.client.remote import Client as PublicClient
from signet.client.remote import daemon_url, is_running, read_token
from signet.config import Config
from signet.errors import ConfigError

__all__ = [
    "Client", "DaemonClient", "LocalClient", "connect", "daemon_url", "is_running",
    "require_workspace",
]

# Remember and recall may embed on the daemon's side; give them room, but never hang forever.
REQUEST_TIMEOUT_S = 60.0

def connect(cfg: Config, env: Mapping[str, str] | None = None) -> Client:
    """This workspace's daemon if it answers at cfg's address, else the store in-process; or,
    with SIGNET_DAEMON_URL set, that (remote) daemon with the token in SIGNET_TOKEN, never a
    silent fall-back to a local store."""
    env = os.environ if env is None else env
    remote = (env.get("SIGNET_DAEMON_URL") or "").strip()
    if remote:
        return DaemonClient(cfg, base_url=remote.rstrip("/"), token=env.get("SIGNET_TOKEN"))
    # The port alone does not say whose daemon it is: one started for another workspace may
    # hold it, and `--workspace B` must never read or write A's memories. The daemon writes
    # its pid to <workspace>/.daemon/pid; /health tells which process answers.
    if is_running(cfg):
        return DaemonClient(cfg)
    return LocalClient(cfg)


# --- daemon -----------------------------------------------------------------------------------


class DaemonClient(PublicClient):
    """`signet.Client` for the CLI: cfg's daemon (or `base_url`), speaking as the actor "cli"."""

    def __init__(
        self, cfg: Config, *, base_url: str | None = None, token: str | None = None
    ) -> None:
        url = base_url or daemon_url(cfg)
        token = (token or "").strip() or _local_token(cfg, url)
        super().__init__(url, token, actor=ACTOR_NAME, timeout_s=REQUEST_TIMEOUT_S)


def _local_token(cfg: Config, url: str) -> str | None:
    """The workspace's own token, for its own daemon or a loopback URL only; ConfigError
    naming SIGNET_TOKEN for any other host, which must never see it."""
    host = urlsplit(url).hostname or ""
    if url != daemon_url(cfg) and not is_loopback(host):
        raise ConfigError(
            f"SIGNET_DAEMON_URL is {url}, another machine, and SIGNET_TOKEN is not set: issue a"
            " token on that daemon's machine (signet token create) and export it as"
            " SIGNET_TOKEN; this workspace's own token is never sent to another host"
        )
    return read_token(cfg)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address by its spelling ("localhost" or 127.x / ::1);
    no name is looked up, since what a name resolves to can change."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# Either side answers every operation with the HTTP contract's JSON; a command calls what both
# define, and mypy checks each call against both.
Client: TypeAlias = PublicClient | LocalClient
