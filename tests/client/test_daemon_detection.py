"""Whether a workspace's daemon runs (client/remote.py `is_running`): a daemon that answers
/health slower than the first, short question (a loaded machine) is still found when its pid
file names a live process; a pid file naming no process, or no pid file, means no daemon."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from signet.client.remote import HEALTH_TIMEOUT_S, is_running
from signet.config import Config


class SlowHealth(BaseHTTPRequestHandler):
    """/health as the daemon answers it, after a delay longer than the first question waits."""

    delay_s = HEALTH_TIMEOUT_S * 3

    def do_GET(self) -> None:  # http.server's name
        time.sleep(self.delay_s)
        body = json.dumps({"status": "ok", "pid": os.getpid()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_daemon(tmp_path: Path) -> Iterator[Config]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowHealth)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    cfg = Config.default(tmp_path / "ws")
    cfg = cfg.replace(port=server.server_address[1], bind="127.0.0.1")
    cfg.pid_path.parent.mkdir(parents=True, exist_ok=True)
    yield cfg
    server.shutdown()
    server.server_close()


def test_a_slow_daemon_whose_process_lives_is_found(slow_daemon: Config) -> None:
    slow_daemon.pid_path.write_text(str(os.getpid()))
    assert is_running(slow_daemon)


def test_a_pid_file_naming_no_process_means_no_daemon(slow_daemon: Config) -> None:
    slow_daemon.pid_path.write_text("999999999")
    assert not is_running(slow_daemon)


def test_no_pid_file_means_no_daemon(slow_daemon: Config) -> None:
    assert not is_running(slow_daemon)
