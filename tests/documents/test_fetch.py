"""URL fetching against a real HTTP server on 127.0.0.1: opt-in, schemes, redirects into
loopback, private and metadata addresses refused before they are followed, size and type."""

from __future__ import annotations

import pytest

from fakes.web_server import WebServer
from signet.documents.fetch import FetchPolicy, fetch, is_public
from signet.errors import Forbidden, InvalidInput

HTML = {"Content-Type": "text/html; charset=utf-8"}


def _server() -> WebServer:
    return WebServer({
        "/page.html": (200, HTML, b"<title>T</title><p>public page</p>"),
        "/hop": (302, {"Location": "/page.html"}, b""),
        "/to-loopback": (302, {"Location": "http://127.0.0.1:{port}/secret"}, b""),
        "/to-private": (301, {"Location": "http://10.1.2.3/admin"}, b""),
        "/to-metadata": (307, {"Location": "http://169.254.169.254/latest/meta-data"}, b""),
        "/to-file": (302, {"Location": "file:///etc/passwd"}, b""),
        "/secret": (200, HTML, b"<p>internal secret</p>"),
        "/big.txt": (200, {"Content-Type": "text/plain"}, b"x" * 5000),
        "/image": (200, {"Content-Type": "image/png"}, b"\x89PNG"),
        "/loop": (302, {"Location": "/loop"}, b""),
    })


def _policy(**changes: object) -> FetchPolicy:
    base = {"enabled": True, "max_bytes": 1000, "timeout_s": 5, "max_redirects": 3,
            "allowed_hosts": ("localhost",)}
    return FetchPolicy(**{**base, **changes})  # type: ignore[arg-type]


def test_an_allowed_host_is_fetched_and_its_redirects_followed() -> None:
    with _server() as web:
        got = fetch(f"{web.url}/hop", _policy())
        assert got.data == b"<title>T</title><p>public page</p>" and got.url.endswith("/page.html")


@pytest.mark.parametrize("path", ["/to-loopback", "/to-private", "/to-metadata"])
def test_a_redirect_to_a_non_public_address_is_refused_unfollowed(path: str) -> None:
    with _server() as web:
        with pytest.raises(Forbidden, match="non-public address"):
            fetch(f"{web.url}{path}", _policy())
        assert web.hits == [path]  # /secret was never asked for


def test_a_redirect_to_file_is_refused() -> None:
    with _server() as web, pytest.raises(Forbidden, match="only http and https"):
        fetch(f"{web.url}/to-file", _policy())


def test_loopback_is_refused_unless_the_host_is_allowed_and_fetching_is_opt_in() -> None:
    with _server() as web:
        with pytest.raises(Forbidden, match="non-public"):
            fetch(f"{web.url}/page.html", _policy(allowed_hosts=()))
        with pytest.raises(Forbidden, match="url_fetch_enabled"):
            fetch(f"{web.url}/page.html", _policy(enabled=False))
        assert web.hits == []
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x/"):
        with pytest.raises(Forbidden):
            fetch(url, _policy())


def test_size_type_and_redirect_loops_are_refused() -> None:
    with _server() as web:
        with pytest.raises(InvalidInput, match="limit is 1000|larger than 1000"):
            fetch(f"{web.url}/big.txt", _policy())
        with pytest.raises(InvalidInput, match="image/png"):
            fetch(f"{web.url}/image", _policy())
        with pytest.raises(InvalidInput, match="redirects"):
            fetch(f"{web.url}/loop", _policy())


def test_address_classes() -> None:
    assert is_public("93.184.216.34") and is_public("2606:4700::1111")
    for address in ("127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254",
                    "100.64.0.1", "0.0.0.0", "::1", "fc00::1", "fe80::1", "::ffff:127.0.0.1",
                    "224.0.0.1"):
        assert not is_public(address), address
