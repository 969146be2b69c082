"""Signet: local-first long-term memory for AI agents, in one SQLite database the user owns (or a
shared PostgreSQL). The map: docs/architecture.md. `signet.Client` and `signet.AsyncClient` talk
to a running daemon (docs/python.md); each is imported on first use, so `import signet` stays
free for a harness hook.
"""

from __future__ import annotations

from signet.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process milliseconds
if TYPE_CHECKING:
    from typing import Any

    from signet.client import Client
    from signet.client.aio import AsyncClient

__all__ = ["AsyncClient", "Client", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Client":
        from signet.client import Client

        return Client
    if name == "AsyncClient":
        from signet.client.aio import AsyncClient

        return AsyncClient
    raise AttributeError(f"module 'signet' has no attribute {name!r}")
