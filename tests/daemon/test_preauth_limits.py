"""What a client without a token can make the daemon hold, over a real daemon and raw sockets:
no body is read before Host and token pass, slow headers are timed out, and requests without a
valid token have a rate limit of their own."""

from __future__ import annotations

import socket
import time
from dataclasses import replace

import httpx

from auth_tokens import auth
from signet.config import AuthConfig, NetworkConfig


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.settimeout(5)
    return sock


def test_a_request_without_a_token_is_refused_before_its_body_is_read(serve) -> None:
    s = serve()
    port = s.url.rsplit(":", 1)[1]
    with connect(s.url) as sock:
        # A megabyte announced, none sent: the answer must not wait for it.
        sock.sendall(f"POST /api/memory/remember HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n".encode())
        answer = sock.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 401"), answer
    with connect(s.url) as sock:
        sock.sendall(b"POST /api/memory/remember HTTP/1.1\r\nHost: evil.example\r\n"
                     b"Content-Length: 1000000\r\n\r\n")
        assert sock.recv(4096).decode().startswith("HTTP/1.1 421")


def test_slow_request_headers_are_timed_out(serve) -> None:
    s = serve(network=replace(NetworkConfig(), header_timeout_s=0.5))
    with connect(s.url) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # and never the rest
        started = time.monotonic()
        assert sock.recv(4096) == b""  # closed by the daemon, not by our 5 s socket timeout
        assert time.monotonic() - started < 4
    assert s.client.get("/health").status_code == 200  # complete requests are unaffected


def test_requests_without_a_valid_token_have_their_own_rate_limit(serve) -> None:
    s = serve(auth=replace(AuthConfig(), unauthenticated_per_minute=3))
    replies = [httpx.get(f"{s.url}/api/memories", headers=auth("sgt1.bad.token")) for _ in range(5)]
    assert [r.status_code for r in replies[:3]] == [401, 401, 401]
    assert replies[4].status_code == 429 and int(replies[4].headers["retry-after"]) >= 1
    assert s.client.get("/api/memories").status_code == 200  # a valid token is not slowed


def test_login_code_guesses_spend_the_unauthenticated_rate_limit(serve) -> None:
    s = serve(auth=replace(AuthConfig(), unauthenticated_per_minute=3))
    guesses = [httpx.post(f"{s.url}/auth/login", json={"code": f"guess-{n}"}) for n in range(3)]
    assert [r.status_code for r in guesses] == [401, 401, 401]
    for path, reply in (
        ("/auth/login", httpx.get(f"{s.url}/auth/login", params={"code": "guess"})),
        ("/app/login", httpx.get(f"{s.url}/app/login", params={"code": "guess"})),
        ("/api/memories", httpx.get(f"{s.url}/api/memories", headers=auth("sgt1.bad.token"))),
    ):
        assert reply.status_code == 429 and int(reply.headers["retry-after"]) >= 1, path
        assert reply.json()["code"] == "rate_limited", path
    assert s.client.get("/api/memories").status_code == 200  # a valid token is not slowed
