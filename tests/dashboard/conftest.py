"""A real daemon for the dashboard tests, and one headless Chromium for the whole session.

`daemon` serves the FastAPI app under uvicorn in a thread, on a free loopback port, around a
SignetApp on a tmp workspace with the hash embedder (so the embeddings map has vectors), and
writes the workspace's pid file as the daemon does, so `signet dashboard --print` in a
subprocess finds it running. `login_link()` runs that command and returns the link;
`quick_link()` makes the same link in-process, for tests about what follows the login.

`browser` is Debian's chromium (/usr/bin/chromium, installed by scripts/test) driven by the
playwright package, launched once for the browser tests: launching costs about a second, a new
context (fresh cookies) per test almost nothing. Never `playwright install`: it downloads a
browser build, which this project does not do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS

from auth_tokens import auth, install_token
from signet.app import SignetApp
from signet.client.remote import health_pid, is_running
from signet.config import Config
from signet.daemon.server import create_app
from signet.daemon.tokens import TokenAuthority
from signet.providers.hash_embedder import HashEmbedder
from uvicorn_thread import serve_in_thread
from write_paths import inline


@dataclass
class Daemon:
    cfg: Config
    app: SignetApp
    url: str
    port: int
    client: httpx.Client  # sends the install admin token

    def quick_link(self) -> str:
        """The same link, its code made in-process (a subprocess costs ~2 s per test)."""
        code = TokenAuthority.for_workspace(self.cfg, self.app.store).login_code()
        return f"{self.url}/app/login?code={code}"

    def login_link(self) -> str:
        """`signet dashboard --print`, run as the user would, in a subprocess."""
        env = {**os.environ, "SIGNET_WORKSPACE": str(self.cfg.workspace),
               "SIGNET_PORT": str(self.port), "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, "-m", "signet", "dashboard", "--print"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()


def start_daemon(workspace: Path) -> tuple[Daemon, Callable[[], None]]:
    # Embedded on the write path: no embed worker runs here, and the map reads the vectors.
    cfg = inline(Config.default(workspace))
    app = SignetApp.open(cfg, embedder=HashEmbedder(64))
    running = serve_in_thread(create_app(app))
    cfg.pid_path.parent.mkdir(parents=True, exist_ok=True)
    cfg.pid_path.write_text(str(os.getpid()))  # this process serves /health, as a daemon's would
    client = httpx.Client(base_url=running.url, timeout=30, headers=auth(install_token(cfg, app)))
    # What `signet dashboard` asks first (the pid file names the process /health reports).
    assert is_running(cfg.replace(port=running.port, bind="127.0.0.1")), (
        f"the daemon at {running.url} does not answer as this workspace's daemon: /health names"
        f" pid {health_pid(cfg.replace(port=running.port, bind='127.0.0.1'), 5.0)}, the pid file"
        f" {cfg.pid_path.read_text()}")

    def stop() -> None:
        client.close()
        running.stop()
        app.close()

    return Daemon(cfg, app, running.url, running.port, client), stop


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    running, stop = start_daemon(tmp_path_factory.mktemp("dashboard") / "ws")
    yield running
    stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the browser tests (they are one module). Module scope, not session:
    playwright's sync API keeps an asyncio loop on this thread while it runs, and the tests
    after it (anyio.run in the MCP tests) need the thread free of one."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: scripts/test installs Debian's chromium (apt-get"
                    " install chromium); set SIGNET_CHROMIUM to use another binary")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


_shots: list[Path] = []


@pytest.fixture(scope="session")
def shots_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests write a screenshot of each page (printed after the run)."""
    folder = tmp_path_factory.mktemp("dashboard-screenshots")
    _shots.append(folder)
    return folder


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for folder in _shots:
        terminalreporter.write_line(f"dashboard screenshots: {folder}")
