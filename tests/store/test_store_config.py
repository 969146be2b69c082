"""store.backend and store.url in agent.yaml and the environment, and what the whole app does
with a backend it does not fully run on yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.errors import ConfigError, StoreError


def _load(tmp_path: Path, yaml: str, env: dict[str, str] | None = None) -> Config:
    (tmp_path / "agent.yaml").write_text(yaml)
    return Config.load(tmp_path, env={"HOME": str(tmp_path), **(env or {})})


def test_defaults_to_sqlite(tmp_path: Path) -> None:
    config = _load(tmp_path, "")
    assert config.store.backend == "sqlite" and config.store.url == ""


def test_postgres_url_from_file_or_environment(tmp_path: Path) -> None:
    config = _load(tmp_path, "store:\n  backend: postgres\n  url: postgresql://signet@db/team\n")
    assert config.store.url == "postgresql://signet@db/team"
    env = {"SIGNET_STORE_URL": "postgresql://signet:s3cret@db/team"}
    config = _load(tmp_path, "store:\n  backend: postgres\n", env)
    assert config.store.backend == "postgres" and config.store.url.endswith("@db/team")


def test_postgres_without_a_url_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="store.backend postgres needs store.url or.*SIGNET_STORE_URL"):
        _load(tmp_path, "store:\n  backend: postgres\n")


@pytest.mark.parametrize("url", ["postgresql://signet:s3cret@db/team",
                                 "postgresql://db/team?password=s3cret"])
def test_a_password_in_agent_yaml_is_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match=r"agent.yaml:3: store.url holds a password.*SIGNET_STORE_URL"):
        _load(tmp_path, f"store:\n  backend: postgres\n  url: {url}\n")


def test_an_unknown_backend_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected one of sqlite, postgres"):
        _load(tmp_path, "store:\n  backend: mysql\n")


def test_the_app_on_an_unreachable_postgres_fails_naming_it_and_opens_no_sqlite(
    tmp_path: Path,
) -> None:
    config = _load(tmp_path, "store:\n  backend: postgres\n",
                   {"SIGNET_STORE_URL": "postgresql://nobody:pw@127.0.0.1:1/none"})
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store postgresql://nobody:[*]{3}@127.0.0.1:1/none") as caught:
        SignetApp.open(config, embedder=None, llm=None)
    assert "pw" not in str(caught.value)
    assert not config.db_path.exists()


def test_daemon_start_on_an_unreachable_postgres_fails_and_writes_no_sqlite(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess
    import sys

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text("store:\n  backend: postgres\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(tmp_path),
           "SIGNET_PORT": str(port), "SIGNET_STORE_URL": "postgresql://nobody@127.0.0.1:1/x"}
    done = subprocess.run([sys.executable, "-m", "signet", "daemon", "start"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "did not start" in done.stderr, done.stderr
    startup = (workspace / ".daemon" / "startup.log").read_text()
    assert "cannot open the PostgreSQL store postgresql://nobody@127.0.0.1:1/x" in startup
    assert not (workspace / "memory" / "memories.db").exists()
