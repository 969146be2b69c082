"""`signet api spec`: the HTTP API's OpenAPI document without a token, browser or daemon. Built from
the same routes in this process, on a throwaway workspace in a temporary directory, so nothing of
the user's is opened.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click

__all__ = ["api"]


@click.group()
def api() -> None:
    """The HTTP API: print its OpenAPI spec (the daemon also serves /docs to a logged-in browser)."""


@api.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the spec to this file instead of stdout.")
def spec(out: Path | None) -> None:
    """Print the OpenAPI 3 document of every route the daemon serves (JSON)."""
    text = json.dumps(openapi_document(), indent=2, sort_keys=True)
    if out is None:
        click.echo(text)
    else:
        out.write_text(text + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


def openapi_document() -> dict[str, Any]:
    # Imported here: only this command needs the daemon's routes.
    from signet.app import SignetApp
    from signet.config import Config
    from signet.daemon.server import create_app

    with tempfile.TemporaryDirectory(prefix="signet-spec-") as tmp:
        app = SignetApp.open(Config.default(Path(tmp) / "ws"), embedder=None, llm=None)
        try:
            return create_app(app).openapi()
        finally:
            app.close()
