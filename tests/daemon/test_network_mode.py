"""`network.mode` as the daemon enforces it before binding, and a remote client reaching a
daemon in a network mode with SIGNET_DAEMON_URL and SIGNET_TOKEN (real subprocesses)."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from daemon_process import daemon_env, free_port, make_workspace

from signet.config import AuthConfig, Config, NetworkConfig
from signet.daemon.guards import HostGuard
from signet.daemon.network import check_network_mode, own_hosts
from signet.errors import ConfigError

TEAM_LAN = "embedding:\n  provider: none\nauth:\n  mode: team\nnetwork:\n  mode: lan\n"


def cfg_for(tmp_path: Path, mode: str, bind: str, auth: str = "team") -> Config:
    return Config.default(tmp_path).replace(
        bind=bind, network=NetworkConfig(mode=mode), auth=AuthConfig(mode=auth)  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(("mode", "bind", "auth"), [
    ("localhost", "127.0.0.1", "local"), ("localhost", "::1", "team"),
    ("tailscale", "100.101.102.103", "team"), ("tailscale", "fd7a:115c:a1e0::1", "hybrid"),
    ("tailscale", "127.0.0.1", "team"), ("lan", "0.0.0.0", "team"), ("lan", "192.168.1.5", "hybrid"),
])
def test_binds_that_fit_the_mode_pass(tmp_path: Path, mode: str, bind: str, auth: str) -> None:
    check_network_mode(cfg_for(tmp_path, mode, bind, auth))


@pytest.mark.parametrize(("mode", "bind", "auth", "message"), [
    ("localhost", "0.0.0.0", "team", "network.mode is localhost"),
    ("localhost", "192.168.1.5", "hybrid", "network.mode is localhost"),
    ("tailscale", "0.0.0.0", "team", "use network.mode lan"),
    ("tailscale", "192.168.1.5", "team", "use network.mode lan"),
    ("lan", "0.0.0.0", "local", "needs auth.mode team or hybrid"),
    ("tailscale", "127.0.0.1", "local", "needs auth.mode team or hybrid"),
])
def test_binds_that_do_not_fit_are_refused(
    tmp_path: Path, mode: str, bind: str, auth: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        check_network_mode(cfg_for(tmp_path, mode, bind, auth))


def test_a_specific_bind_address_is_one_of_the_daemons_host_names(tmp_path: Path) -> None:
    cfg = cfg_for(tmp_path, "tailscale", "100.101.102.103")
    guard = HostGuard(None, port=cfg.port, allowed_hosts=own_hosts(cfg))  # type: ignore[arg-type]
    assert guard.allows(f"100.101.102.103:{cfg.port}", cfg.port)
    assert not guard.allows("evil.example:3850", cfg.port)
    assert own_hosts(cfg_for(tmp_path, "lan", "0.0.0.0")) == ()
    assert own_hosts(cfg_for(tmp_path, "localhost", "127.0.0.1", "local")) == ()


def run(ws: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": "1",
            "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1", **env}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=full,
                          capture_output=True, text=True, timeout=120)


def test_the_daemon_refuses_a_bind_outside_its_network_mode(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", "embedding:\n  provider: none\nauth:\n  mode: team\n")
    env = {**daemon_env(ws, free_port()), "SIGNET_BIND": "0.0.0.0"}
    done = subprocess.run([sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "network.mode is localhost" in done.stderr


def test_a_remote_client_uses_the_daemon_url_and_a_token(tmp_path: Path) -> None:
    served = make_workspace(tmp_path / "server", TEAM_LAN)
    port = free_port()
    env = {**daemon_env(served, port), "SIGNET_BIND": "0.0.0.0"}
    proc = subprocess.Popen([sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                reply = httpx.get(f"{url}/health", timeout=0.5)
                if reply.status_code == 200 and not reply.json().get("starting"):
                    break
            except httpx.HTTPError:
                proc.poll()
                assert proc.returncode is None, proc.communicate()[1]
                time.sleep(0.1)
        else:  # never answered: say why (its log) instead of failing later on something else
            proc.kill()
            raise AssertionError(f"the daemon did not answer {url}/health: {proc.communicate()[1]}")
        issued = run(served, "--json", "token", "create", "--role", "agent", "--name", "laptop")
        token = json.loads(issued.stdout)["token"]

        laptop = make_workspace(tmp_path / "laptop")  # no daemon, no token of its own
        remote = {"SIGNET_DAEMON_URL": url, "SIGNET_TOKEN": token}
        stored = run(laptop, "--json", "remember", "The build server is called Hopper", **remote)
        assert stored.returncode == 0, stored.stderr
        found = run(laptop, "--json", "recall", "build server", "--mode", "keyword", **remote)
        assert "Hopper" in found.stdout
        assert not (laptop / "memory" / "memories.db").exists()  # nothing went to a local store
        refused = run(laptop, "recall", "build server", SIGNET_DAEMON_URL=url)
        assert refused.returncode == 1 and "token" in refused.stderr.lower()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_daemon_start_on_every_interface_reports_the_daemon_it_started(tmp_path: Path) -> None:
    """`signet daemon start` with bind 0.0.0.0 waits for /health over loopback: asked at
    http://0.0.0.0:port the Host guard refused it, and start failed for a serving daemon."""
    served = make_workspace(tmp_path / "server", TEAM_LAN)
    env = {"SIGNET_PORT": str(free_port()), "SIGNET_BIND": "0.0.0.0"}
    try:
        started = run(served, "daemon", "start", **env)
        assert started.returncode == 0, started.stderr
        status = run(served, "--json", "daemon", "status", **env)
        assert json.loads(status.stdout)["healthy"] is True, status.stdout
    finally:
        run(served, "daemon", "stop", **env)


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with an empty JSON object and keeps its Authorization header."""

    seen: list[str] = []

    def _answer(self) -> None:
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *_args: object) -> None:
        pass


def test_the_local_token_is_never_sent_to_another_machine(tmp_path: Path) -> None:
    """SIGNET_DAEMON_URL naming another host without SIGNET_TOKEN: the CLI says what is
    missing and sends nothing, least of all the local install token (admin)."""
    laptop = make_workspace(tmp_path / "laptop")
    local = "sgt1.LOCAL-INSTALL-TOKEN.sig"
    (laptop / ".daemon").mkdir()
    (laptop / ".daemon" / "token").write_text(local + "\n")
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = {k: v for k, v in os.environ.items() if k != "SIGNET_TOKEN"}
    env.update(SIGNET_WORKSPACE=str(laptop), OMP_NUM_THREADS="1")
    try:
        # The machine's own name resolves here, but a name is not loopback: it can point
        # anywhere, so it counts as another machine.
        for url in (f"http://{socket.gethostname()}:{port}", f"http://192.0.2.1:{port}"):
            done = subprocess.run(
                [sys.executable, "-m", "signet", "recall", "build server"],
                env={**env, "SIGNET_DAEMON_URL": url}, capture_output=True, text=True,
                timeout=120,
            )
            assert done.returncode == 1, done.stdout
            assert "SIGNET_TOKEN" in done.stderr and url in done.stderr, done.stderr
        assert not [h for h in _Recorder.seen if local in h]
        # A loopback URL is this machine: the local token goes there as before.
        done = subprocess.run(
            [sys.executable, "-m", "signet", "--json", "status"],
            env={**env, "SIGNET_DAEMON_URL": f"http://127.0.0.1:{port}"}, capture_output=True,
            text=True, timeout=120,
        )
        assert _Recorder.seen and _Recorder.seen[-1] == f"Bearer {local}", done.stderr
    finally:
        server.shutdown()
        server.server_close()
