"""How the CLI reaches the memory: through a running daemon, or in-process when none runs.

Both implementations of `Client` speak the wire shape of the HTTP contract: every operation
returns the JSON dict the daemon would send (`Memory.to_dict()`, `RecallResponse.to_dict()`,
...). That is what makes `--json` print the same thing whichever side answered, and it lets the
readable formatters in `output.py` work from one shape. Both live below the adapters, in
`signet.client`: `DaemonClient` is the public `signet.Client` speaking as "cli", `LocalClient`
its in-process mode (`client/local.py`).

`connect(cfg)` asks `GET /health` with a short timeout: a daemon that answers, and whose pid is
the one in this workspace's pid file, owns the database and gets every call (so its workers
see new memories at once); otherwise `LocalClient` opens the store itself.

`SIGNET_DAEMON_URL` (with the token in `SIGNET_TOKEN`) points the CLI at a daemon on another
machine (`network.mode` tailscale or lan): every call goes there, never to a local store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Protocol

from signet.client.local import ACTOR_NAME, LocalClient, require_workspace
from signet.client.remote import Client as PublicClient
from signet.client.remote import daemon_url, health_pid, is_running, pid_file_value, read_token
from signet.config import Config

__all__ = [
    "Client", "DaemonClient", "LocalClient", "connect", "daemon_url", "is_running",
    "require_workspace",
]

# Remember and recall may embed on the daemon's side; give them room, but never hang forever.
REQUEST_TIMEOUT_S = 60.0

JSON = dict[str, Any]
# What an operation answers: the daemon's JSON object (the public client types it per route,
# client/wire.py; the in-process client builds the same shape as a plain dict).
Reply = Mapping[str, Any]


class Client(Protocol):
    """The operations the commands need, each returning the HTTP contract's JSON shape."""

    def remember(self, content: str, fields: JSON) -> Reply: ...

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> Reply:
        """`mode` None: the workspace's `search.default_mode`. `expand`: the transcript
        excerpt of each memory that came from a session. `min_confidence`: drop results less
        confident than this (recall/confidence.py)."""
        ...

    def import_transcript(self, session_id: str, body: JSON) -> Reply: ...

    def sessions(self, *, limit: int, offset: int, filters: JSON) -> Reply: ...

    def session(self, session_id: str, *, project: str | None) -> Reply: ...

    def session_search(self, query: str, *, limit: int, project: str | None) -> Reply: ...

    def get(self, memory_id: str) -> Reply: ...

    def list(self, *, limit: int, offset: int, filters: JSON) -> Reply: ...

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> Reply: ...

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> Reply: ...

    def recover(self, memory_id: str, *, reason: str | None) -> Reply: ...

    def history(self, memory_id: str) -> Reply: ...

    def status(self) -> Reply: ...

    def close(self) -> None: ...

    def __enter__(self) -> Client: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None, /,
    ) -> None: ...


def connect(cfg: Config, env: Mapping[str, str] | None = None) -> Client:
    """This workspace's daemon if it answers at cfg's address, else the store in-process; or,
    with SIGNET_DAEMON_URL set, that (remote) daemon with the token in SIGNET_TOKEN, never a
    silent fall-back to a local store."""
    env = os.environ if env is None else env
    remote = (env.get("SIGNET_DAEMON_URL") or "").strip()
    if remote:
        return DaemonClient(cfg, base_url=remote.rstrip("/"), token=env.get("SIGNET_TOKEN"))
    answering = health_pid(cfg)
    # The port alone does not say whose daemon it is: one started for another workspace may
    # hold it, and `--workspace B` must never read or write A's memories. The daemon writes
    # its pid to <workspace>/.daemon/pid; /health tells which process answers.
    if answering is not None and answering == pid_file_value(cfg):
        return DaemonClient(cfg)
    return LocalClient(cfg)


# --- daemon -----------------------------------------------------------------------------------


class DaemonClient(PublicClient):
    """`signet.Client` for the CLI: cfg's daemon (or `base_url`), speaking as the actor "cli"."""

    def __init__(
        self, cfg: Config, *, base_url: str | None = None, token: str | None = None
    ) -> None:
        token = (token or "").strip() or read_token(cfg)
        super().__init__(
            base_url or daemon_url(cfg), token, actor=ACTOR_NAME, timeout_s=REQUEST_TIMEOUT_S
        )
