"""The one way into a running daemon from another process: `signet.Client` (remote.py) over the
HTTP API, typed by wire.py, with the in-process mode `LocalClient` (local.py) for when no
daemon runs. Adapters (CLI, MCP) import this package, never each other; docs/python.md shows
it in use. `signet.AsyncClient` (aio.py) derives the same methods, awaited over httpx; it is
not imported here, so a CLI process never loads httpx.
"""

from signet.client.local import LocalClient, without_workers
from signet.client.remote import Client, daemon_url, is_running, read_token

__all__ = ["Client", "LocalClient", "daemon_url", "is_running", "read_token", "without_workers"]
