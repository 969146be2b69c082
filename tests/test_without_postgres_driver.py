"""The PostgreSQL driver is an optional extra (`pip install -e '.[postgres]'`): a default install
has no psycopg. Every module the SQLite product loads must import without it, so a module that
imports psycopg at its top, on the path of the daemon, the CLI or the MCP server, would break
every user who did not ask for PostgreSQL.

The check runs in a subprocess in which `psycopg` and `psycopg_pool` cannot be imported (a
`None` in sys.modules makes their import raise ImportError, as a missing package does): it
imports every adapter's entry module, opens an app on a SQLite workspace, remembers, recalls
and reads the status; and asking for the postgres backend there names the missing extra.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["psycopg"] = None
    sys.modules["psycopg_pool"] = None
    from pathlib import Path
    import signet.cli.main, signet.daemon.server, signet.mcp.tools, signet.hooks  # noqa: F401
    from signet.app import SignetApp
    from signet.config import Config, StoreConfig
    from signet.errors import SignetError
    from signet.providers.hash_embedder import HashEmbedder
    from signet.types import RecallQuery

    config = Config.default(Path(sys.argv[1]))
    app = SignetApp.open(config, embedder=HashEmbedder(64), llm=None)
    app.remember("the driver is optional")
    hits = app.recall(RecallQuery(query="driver optional")).hits
    assert hits and hits[0].memory.content == "the driver is optional", hits
    assert app.status()["memories"] == 1
    app.close()
    try:
        SignetApp.open(config.replace(store=StoreConfig(backend="postgres",
                       url="postgresql://nobody@127.0.0.1:1/none")), embedder=None, llm=None)
    except SignetError as exc:
        print("REFUSED:", exc)
    """
)


def test_the_sqlite_product_runs_without_the_postgres_driver(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "ws")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    refusal = done.stdout.split("REFUSED:", 1)[-1]
    assert "postgres" in refusal.lower() and "pip install" in refusal, done.stdout
