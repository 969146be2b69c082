"""`signet.AsyncClient`: `signet.Client`'s typed methods, awaited, over `httpx.AsyncClient`, for
callers inside an event loop.

Each method is `derived(Client.<name>)`: the sync method's own body runs with a recorder in place of
the client, capturing what it would send, which is then sent with httpx and answered as `Client`
does (`remote.answer`). So the two cannot drift, and a test fails while a method is missing. httpx
is imported only here, so a short-lived CLI process does not pay for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import httpx

from signet.client.http import Reply
from signet.client.remote import (
    DEFAULT_TIMEOUT_S,
    Client,
    answer,
    daemon_url,
    read_token,
    request_headers,
)
from signet.config import Config
from signet.errors import SignetError

__all__ = ["AsyncClient"]

P = ParamSpec("P")
T = TypeVar("T")
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    json: Any = None
    params: Mapping[str, Any] | None = None


class _Recorder:
    """Stands in for a `Client` while one of its methods runs: the request is kept, not sent."""

    def _call(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> _Request:
        return _Request(method, path, json, dict(params) if params else None)


def derived(
    method: Callable[Concatenate[Client, P], T],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    """The awaitable twin of a `Client` method that makes one request and returns its answer."""

    async def call(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        request = method(cast(Client, _Recorder()), *args, **kwargs)
        if not isinstance(request, _Request):
            raise TypeError(f"Client.{method.__name__} does not make exactly one request")
        return cast(T, await self._send(request))

    functools.update_wrapper(call, method)  # its name, docstring and signature for help()
    return call


class AsyncClient:
    """A running daemon at `url`, awaited; the same arguments and answers as `signet.Client`."""

    def __init__(
        self, url: str, token: str | None = None, *, actor: str = "python",
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.base_url = url.rstrip("/")
        self._http = httpx.AsyncClient(
            headers=request_headers(actor, token), timeout=timeout_s, trust_env=False
        )

    @classmethod
    def for_workspace(
        cls, workspace: str | Path | None = None, *, actor: str = "python",
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> AsyncClient:
        """The daemon of `workspace`, as `Client.for_workspace` finds it."""
        cfg = Config.load(workspace)
        return cls(daemon_url(cfg), read_token(cfg), actor=actor, timeout_s=timeout_s)

    # Every request method of Client, in its order (tests/client checks none is missing).
    remember = derived(Client.remember)
    recall = derived(Client.recall)
    get = derived(Client.get)
    modify = derived(Client.modify)
    forget = derived(Client.forget)
    recover = derived(Client.recover)
    history = derived(Client.history)
    feedback = derived(Client.feedback)
    import_transcript = derived(Client.import_transcript)
    sessions = derived(Client.sessions)
    session = derived(Client.session)
    session_search = derived(Client.session_search)
    context = derived(Client.context)
    identity = derived(Client.identity)
    forget_session = derived(Client.forget_session)
    threads = derived(Client.threads)
    thread = derived(Client.thread)
    lineage = derived(Client.lineage)
    reindex_artifacts = derived(Client.reindex_artifacts)
    synthesize_memory_md = derived(Client.synthesize_memory_md)
    entities = derived(Client.entities)
    entity = derived(Client.entity)
    pin_entity = derived(Client.pin_entity)
    unpin_entity = derived(Client.unpin_entity)
    communities = derived(Client.communities)
    detect_communities = derived(Client.detect_communities)
    graph_stats = derived(Client.graph_stats)
    ingest_document = derived(Client.ingest_document)
    documents = derived(Client.documents)
    document = derived(Client.document)
    delete_document = derived(Client.delete_document)
    connectors = derived(Client.connectors)
    connector = derived(Client.connector)
    add_connector = derived(Client.add_connector)
    sync_connector = derived(Client.sync_connector)
    enable_connector = derived(Client.enable_connector)
    remove_connector = derived(Client.remove_connector)
    import_from = derived(Client.import_from)
    skills = derived(Client.skills)
    skill = derived(Client.skill)
    install_skill = derived(Client.install_skill)
    remove_skill = derived(Client.remove_skill)
    embeddings_status = derived(Client.embeddings_status)
    re_embed = derived(Client.re_embed)
    jobs = derived(Client.jobs)
    job = derived(Client.job)
    requeue_dead = derived(Client.requeue_dead)
    run_retention = derived(Client.run_retention)
    run_maintenance = derived(Client.run_maintenance)
    maintenance_report = derived(Client.maintenance_report)
    health = derived(Client.health)
    status = derived(Client.status)
    list = derived(Client.list)  # last: the name shadows the builtin in this class's body

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _send(self, request: _Request) -> JSON:
        try:
            reply = await self._http.request(
                request.method, self.base_url + request.path, json=request.json,
                params=request.params,
            )
        except httpx.HTTPError as exc:
            raise SignetError(
                f"daemon at {self.base_url} did not answer: {exc}", code="daemon_unreachable"
            ) from exc
        return answer(request.method, request.path, Reply(reply.status_code, reply.content))
