"""The daemon's start (daemon/startup.py): /health answers while the API is still being built,
and a request that comes before the API is ready waits for it instead of being refused.

The gate is served by a real uvicorn on a loopback port in a thread and built from a real
SignetApp on a tmp workspace; the test decides when the build runs, so the order is certain
without timing anything.
"""

from __future__ import annotations

import os
import threading

import httpx
from daemon_process import free_port, make_workspace

from signet.app import SignetApp
from signet.config import Config
from signet.daemon.startup import StartingGate, bind_socket, make_server
from signet.daemon.tokens import TokenAuthority, auth_headers, ensure_install_token


def test_health_answers_before_the_api_and_early_requests_wait_for_it(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    config = Config.load(ws, env={"SIGNET_PORT": str(free_port()), "HOME": str(ws)})
    app = SignetApp.open(config)
    gate = StartingGate(config)
    sock = bind_socket("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = make_server(gate, config)
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            # The API is not built yet (build has not been called): /health answers anyway.
            health = _until_answered(http)
            assert health.json()["pid"] == os.getpid() and health.json()["starting"] is True
            assert gate.api is None

            ensure_install_token(config, TokenAuthority.for_core(app.token_authority_store(),
                                                                 app.clock))
            answers: list[httpx.Response] = []
            early = threading.Thread(target=lambda: answers.append(
                http.get("/api/status", headers=auth_headers(config))))
            early.start()
            early.join(0.5)
            assert early.is_alive() and not answers  # it waits: nothing can answer it yet

            gate.build(app)
            early.join(60)
            assert answers and answers[0].status_code == 200, answers
            assert answers[0].json()["daemon"]["pid"] == os.getpid()
            # Served by the API now: its own /health and its guards.
            assert http.get("/health").json() == {"status": "ok", "version": health.json()["version"],
                                                  "pid": os.getpid()}
            assert http.get("/api/status").status_code == 401
    finally:
        server.should_exit = True
        serving.join(30)
        sock.close()
        gate.stop_workers()
        app.close()
    assert gate.failure is None


def test_the_starting_health_keeps_the_host_guard(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    config = Config.load(ws, env={"SIGNET_PORT": str(free_port()), "HOME": str(ws)})
    gate = StartingGate(config)
    sock = bind_socket("127.0.0.1", 0)
    server = make_server(gate, config)
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=30) as http:
            _until_answered(http)
            refused = http.get("/health", headers={"Host": "evil.example"})
            assert refused.status_code == 421
    finally:
        server.should_exit = True
        serving.join(30)
        sock.close()


def _until_answered(http: httpx.Client) -> httpx.Response:
    for _ in range(3000):
        try:
            reply = http.get("/health")
        except httpx.TransportError:
            threading.Event().wait(0.01)
            continue
        assert reply.status_code == 200, reply.text
        return reply
    raise AssertionError("/health never answered")
