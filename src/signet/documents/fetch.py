"""Fetching a document from a URL without becoming a server-side request forgery tool.

Off unless `documents.url_fetch_enabled`. Every hop (redirects followed by hand, at most
`max_redirects`) must be http(s) to a host whose every address is public, unless listed in
`documents.fetch_allowed_hosts`; the answer must be a supported type within
`documents.fetch_max_bytes`, read as a stream. `documents.fetch_timeout_ms` is one deadline for the
whole fetch, enforced by shutting the sockets. DNS rebinding between check and request is the
residual risk, limited to listed hosts.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from signet.documents.extract import kind_of
from signet.errors import Forbidden, InvalidInput, ProviderError, ProviderTimeout

if TYPE_CHECKING:
    import httpx

USER_AGENT = "signet-document-fetch/1"


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    enabled: bool = False
    max_bytes: int = 10_000_000
    timeout_s: float = 15.0
    max_redirects: int = 5
    allowed_hosts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # after redirects
    data: bytes
    content_type: str


def fetch(url: str, policy: FetchPolicy, transport: httpx.BaseTransport | None = None) -> Fetched:
    """GET `url` under `policy`; Forbidden for what the policy refuses, InvalidInput for an
    unusable answer, ProviderError for a network failure."""
    if not policy.enabled:
        raise Forbidden(
            "fetching URLs is off; set documents.url_fetch_enabled: true in agent.yaml to allow it",
            code="url_fetch_disabled",
        )
    import httpx  # here: a CLI command that fetches nothing does not pay its import

    deadline = time.monotonic() + policy.timeout_s
    with httpx.Client(follow_redirects=False, transport=transport,
                      headers={"User-Agent": USER_AGENT}) as client, _CutOff(deadline) as cut:
        for _hop in range(policy.max_redirects + 1):
            check_url(url, policy)
            try:
                with client.stream("GET", url, timeout=_left(deadline, url, policy),
                                   extensions={"trace": cut.trace}) as reply:
                    if reply.is_redirect:
                        url = urljoin(url, reply.headers.get("location", ""))
                        continue
                    return _read(reply, url, policy, deadline)
            except httpx.HTTPError as exc:
                if time.monotonic() >= deadline:
                    raise _too_slow(url, policy) from exc
                raise ProviderError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from exc
    raise InvalidInput(f"more than {policy.max_redirects} redirects fetching the document")


def _left(deadline: float, url: str, policy: FetchPolicy) -> float:
    """Seconds until the deadline; ProviderTimeout when it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _too_slow(url, policy)
    return left


def _too_slow(url: str, policy: FetchPolicy) -> ProviderTimeout:
    return ProviderTimeout(f"fetching {url} took longer than {policy.timeout_s:g} s"
                           " (documents.fetch_timeout_ms), redirects and body included")


class _CutOff:
    """Shut down every socket the fetch opened at the deadline: a read waits at most the time left
    when its hop began, so a response trickled a byte at a time would otherwise run past it."""

    def __init__(self, deadline: float) -> None:
        self._sockets: list[socket.socket] = []
        self._passed = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._shut_all)
        self._timer.daemon = True

    def __enter__(self) -> _CutOff:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if not event.endswith(".connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            passed = self._passed
        if passed:  # connected just as the deadline passed
            _shut(sock)

    def _shut_all(self) -> None:
        with self._lock:
            self._passed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def parse_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; Forbidden for another scheme, InvalidInput for
    a URL that does not parse (a broken IPv6 literal, a port out of range) or names no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"not a valid URL: {url[:200]} ({exc})") from exc
    if parts.scheme not in ("http", "https"):
        raise Forbidden(f"only http and https URLs are fetched, not {parts.scheme or 'none'}://",
                        code="url_refused")
    host = (parts.hostname or "").lower()
    if not host:
        raise InvalidInput(f"the URL names no host: {url[:200]}")
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def check_url(url: str, policy: FetchPolicy) -> None:
    _scheme, host, port = parse_url(url)
    if host in {h.lower() for h in policy.allowed_hosts}:
        return
    for address in _addresses(host, port):
        if not is_public(address):
            raise Forbidden(
                f"refusing to fetch {host}: it resolves to a non-public address ({address});"
                " list the host in documents.fetch_allowed_hosts to allow it",
                code="url_refused",
            )


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _addresses(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ProviderError(f"cannot resolve {host}: {exc}") from exc
    return sorted({str(info[4][0]) for info in infos})


def _read(reply: httpx.Response, url: str, policy: FetchPolicy, deadline: float) -> Fetched:
    if reply.status_code >= 400:
        raise ProviderError(f"fetching {url} answered HTTP {reply.status_code}")
    content_type = reply.headers.get("content-type", "")
    kind_of(content_type, urlsplit(url).path)  # refuse an unsupported type before reading it
    declared = reply.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > policy.max_bytes:
        raise InvalidInput(f"the document is {declared} bytes; the limit is {policy.max_bytes}"
                           " (documents.fetch_max_bytes)")
    body = bytearray()
    for piece in reply.iter_bytes():
        _left(deadline, url, policy)
        body += piece
        if len(body) > policy.max_bytes:
            raise InvalidInput(f"the document is larger than {policy.max_bytes} bytes"
                               " (documents.fetch_max_bytes)")
    return Fetched(url, bytes(body), content_type)
