"""`signet mcp`: the MCP server over stdin/stdout, for harnesses that spawn their MCP servers.

It proxies to this workspace's daemon when one runs (so the daemon's workers see new memories
at once) and otherwise opens the store in-process; the choice is made once, at start. Only the
MCP protocol may appear on stdout: warnings and logs go to stderr.
"""

from __future__ import annotations

import os

import click

from signet.cli.state import CliState

__all__ = ["mcp"]


@click.command()
@click.pass_obj
def mcp(state: CliState) -> None:
    """Serve the memory tools (memory_search, memory_store, ...) to an MCP client on stdio."""
    # Imported here: the MCP SDK and the store are heavy, and the other commands never need them.
    from signet.mcp import build_server, connect_backend

    # The same single-threaded numeric defaults as the daemon, for in-process embedding.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    backend, app = connect_backend(state.config())
    try:
        build_server(backend).run("stdio")
    finally:
        backend.close()
        if app is not None:
            app.close()
