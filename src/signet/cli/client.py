"""How the CLI reaches the memory: through a running daemon, or in-process when none runs.

Both implementations of `Client` speak the wire shape of the HTTP contract: every operation
returns the JSON dict the daemon would send (`Memory.to_dict()`, `RecallResponse.to_dict()`,
...). That is what makes `--json` print the same thing whichever side answered, and it lets the
readable formatters in `output.py` work from one shape.

`connect(cfg)` asks `GET /health` with a short timeout: a daemon that answers, and whose pid is
the one in this workspace's pid file, owns the database and gets every call (so its workers see new memories at once); otherwise `LocalClient` opens the
store itself, which SQLite's WAL mode allows next to other readers. The local side opens the
app with the configured embedder only for the operations that write or search vectors
(remember, recall except keyword mode, a content change) and for status, which reports it;
get, list, history, forget and recover open it without one, so they never touch the model.

`SIGNET_DAEMON_URL` (with the token in `SIGNET_TOKEN`) points the CLI at a daemon on another
machine (`network.mode` tailscale or lan): every call goes there, never to a local store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from signet.cli.daemon_http import DaemonHttp, Reply, TransportError
from signet.config import Config
from signet.errors import NotFound, SignetError
from signet.types import Actor, MemoryFilters, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["Client", "DaemonClient", "LocalClient", "connect", "daemon_url", "require_workspace"]

HEALTH_TIMEOUT_S = 0.3
# Remember and recall may embed on the daemon's side; give them room, but never hang forever.
REQUEST_TIMEOUT_S = 60.0
ACTOR_NAME = "cli"

JSON = dict[str, Any]


class Client(Protocol):
    """The operations the commands need, each returning the HTTP contract's JSON shape."""

    def remember(self, content: str, fields: JSON) -> JSON: ...

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> JSON:
        """`mode` None: the workspace's `search.default_mode`. `expand`: the transcript
        excerpt of each memory that came from a session. `min_confidence`: drop results less
        confident than this (recall/confidence.py)."""
        ...

    def import_transcript(self, session_id: str, body: JSON) -> JSON: ...

    def sessions(self, *, limit: int, offset: int, filters: JSON) -> JSON: ...

    def session(self, session_id: str, *, project: str | None) -> JSON: ...

    def session_search(self, query: str, *, limit: int, project: str | None) -> JSON: ...

    def get(self, memory_id: str) -> JSON: ...

    def list(self, *, limit: int, offset: int, filters: JSON) -> JSON: ...

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> JSON: ...

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> JSON: ...

    def recover(self, memory_id: str, *, reason: str | None) -> JSON: ...

    def history(self, memory_id: str) -> JSON: ...

    def status(self) -> JSON: ...

    def close(self) -> None: ...

    def __enter__(self) -> Client: ...

    def __exit__(self, *exc: object) -> None: ...


def connect(cfg: Config, env: Mapping[str, str] | None = None) -> Client:
    """This workspace's daemon if it answers at cfg's address, else the store in-process; or,
    with SIGNET_DAEMON_URL set, that (remote) daemon with the token in SIGNET_TOKEN, never a
    silent fall-back to a local store."""
    env = os.environ if env is None else env
    remote = (env.get("SIGNET_DAEMON_URL") or "").strip()
    if remote:
        return DaemonClient(cfg, base_url=remote.rstrip("/"), token=env.get("SIGNET_TOKEN"))
    answering = _health_pid(cfg)
    # The port alone does not say whose daemon it is: one started for another workspace may
    # hold it, and `--workspace B` must never read or write A's memories. The daemon writes
    # its pid to <workspace>/.daemon/pid; /health tells which process answers.
    if answering is not None and answering == _pid_file_value(cfg):
        return DaemonClient(cfg)
    return LocalClient(cfg)


def is_running(cfg: Config) -> bool:
    """Whether this workspace's daemon answers at cfg's address (its pid file names the pid
    that /health reports)."""
    answering = _health_pid(cfg)
    return answering is not None and answering == _pid_file_value(cfg)


def require_workspace(cfg: Config) -> None:
    """Refuse, pointing at `signet init`, when the workspace has no database.

    Opening the store creates it, so a read-only command run against a typo'd `--workspace`
    would otherwise leave a fresh empty workspace behind and report it as if it were real.
    """
    if not cfg.db_path.is_file():
        raise NotFound(
            f"no Signet workspace at {cfg.workspace} (no database at {cfg.db_path}): run "
            "`signet init` to create it, or choose another with --workspace or SIGNET_WORKSPACE",
            code="workspace_missing",
        )


def _health_pid(cfg: Config) -> int | None:
    http = DaemonHttp(daemon_url(cfg), {}, HEALTH_TIMEOUT_S)
    try:
        reply = http.request("GET", "/health")
        body = reply.json()
    except (TransportError, ValueError):
        return None  # nothing listens there, or not something speaking our protocol
    finally:
        http.close()
    if reply.status != 200 or not isinstance(body, dict) or body.get("status") != "ok":
        return None
    pid = body.get("pid")
    return pid if isinstance(pid, int) else None


def _pid_file_value(cfg: Config) -> int | None:
    try:
        text = cfg.pid_path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def daemon_url(cfg: Config) -> str:
    # A daemon bound to every interface is still reached over loopback.
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(cfg.bind, cfg.bind)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{cfg.port}"


# --- daemon -----------------------------------------------------------------------------------


class DaemonClient:
    """Calls the daemon's HTTP API and turns its error JSON back into SignetError classes."""

    def __init__(
        self, cfg: Config, *, base_url: str | None = None, token: str | None = None
    ) -> None:
        headers = {"X-Signet-Actor": ACTOR_NAME}
        token = (token or "").strip() or _read_token(cfg)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.base_url = base_url or daemon_url(cfg)
        self._http = DaemonHttp(self.base_url, headers, REQUEST_TIMEOUT_S)

    def remember(self, content: str, fields: JSON) -> JSON:
        return self._call("POST", "/api/memory/remember", json={"content": content, **fields})

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> JSON:
        body: JSON = {"query": query, "limit": limit, "filters": filters}
        if mode is not None:  # else the daemon's search.default_mode
            body["mode"] = mode
        if expand:
            body["expand"] = True
        if min_confidence is not None:
            body["min_confidence"] = min_confidence
        return self._call("POST", "/api/memory/recall", json=body)

    def import_transcript(self, session_id: str, body: JSON) -> JSON:
        path = f"/api/sessions/{quote(session_id, safe='')}/transcript"
        return self._call("POST", path, json=body)

    def sessions(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        params = {"limit": limit, "offset": offset, **_present(**filters)}
        return self._call("GET", "/api/sessions", params=params)

    def session(self, session_id: str, *, project: str | None) -> JSON:
        path = f"/api/sessions/{quote(session_id, safe='')}"
        return self._call("GET", path, params=_present(project=project))

    def session_search(self, query: str, *, limit: int, project: str | None) -> JSON:
        params = {"q": query, "limit": limit, **_present(project=project)}
        return self._call("GET", "/api/sessions/search", params=params)

    def get(self, memory_id: str) -> JSON:
        return self._call("GET", _memory_path(memory_id))

    def list(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        params: dict[str, str | int] = {"limit": limit, "offset": offset}
        for name, value in filters.items():
            params[name] = _query_value(value)
        return self._call("GET", "/api/memories", params=params)

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> JSON:
        body = {**changes, **_present(version=version, reason=reason)}
        return self._call("PATCH", _memory_path(memory_id), json=body)

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> JSON:
        params = {"force": _query_value(force), **_present(reason=reason)}
        return self._call("DELETE", _memory_path(memory_id), params=params)

    def recover(self, memory_id: str, *, reason: str | None) -> JSON:
        return self._call("POST", _memory_path(memory_id, "recover"), json=_present(reason=reason))

    def history(self, memory_id: str) -> JSON:
        return self._call("GET", _memory_path(memory_id, "history"))

    def status(self) -> JSON:
        return self._call("GET", "/api/status")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def _call(
        self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None
    ) -> JSON:
        try:
            reply = self._http.request(method, path, json_body=json, params=params)
        except TransportError as exc:
            raise SignetError(
                f"daemon at {self.base_url} did not answer: {exc}", code="daemon_unreachable"
            ) from exc
        if reply.status >= 400:
            raise error_from_reply(reply)
        try:
            return reply.json()
        except ValueError as exc:
            raise SignetError(
                f"daemon answered {method} {path} with non-JSON", code="bad_response"
            ) from exc


def error_from_reply(reply: Reply) -> SignetError:
    """`{"error", "code"}` back to the SignetError subclass that owns that code."""
    try:
        body = reply.json()
        message, code = str(body["error"]), str(body["code"])
    except (ValueError, KeyError, TypeError):
        text = reply.text.strip()[:200]
        return SignetError(f"daemon answered HTTP {reply.status}: {text}", code="daemon_error")
    return _error_classes().get(code, SignetError)(message, code=code)


def _error_classes() -> dict[str, type[SignetError]]:
    found: dict[str, type[SignetError]] = {}
    pending: list[type[SignetError]] = [SignetError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def _read_token(cfg: Config) -> str | None:
    try:
        return cfg.token_path.read_text("utf-8").strip() or None
    except OSError:
        return None


def _memory_path(memory_id: str, *rest: str) -> str:
    # Quoted so an id can never step into another route ("../", "?").
    return "/".join(["/api/memory", quote(memory_id, safe=""), *rest])


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _present(**values: Any) -> JSON:
    return {name: value for name, value in values.items() if value is not None}


# --- in-process -------------------------------------------------------------------------------


class LocalClient:
    """Opens the workspace's store in this process; the embedder only when an operation needs it."""

    actor = Actor(name=ACTOR_NAME, type="operator")

    def __init__(self, cfg: Config) -> None:
        self._cfg = cfg
        self._app: SignetApp | None = None
        self._with_embedder = False

    def remember(self, content: str, fields: JSON) -> JSON:
        result = self._open(embedder=True).remember(content, actor=self.actor, **fields)
        return {
            "id": result.id,
            "deduped": result.deduped,
            "embedded": result.embedded,
            "memory": result.memory.to_dict(),
        }

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> JSON:
        chosen = mode or self._cfg.search.default_mode
        request = RecallQuery(
            query, limit=limit, mode=chosen, filters=_filters(filters), expand=expand,  # type: ignore[arg-type]
            min_confidence=min_confidence,
        )
        return self._existing(embedder=chosen != "keyword").recall(request).to_dict()

    def import_transcript(self, session_id: str, body: JSON) -> JSON:
        app = self._open(embedder=False)
        return app.import_transcript(actor=self.actor, session_id=session_id, **body)

    def sessions(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        return self._existing(embedder=False).session_list(limit=limit, offset=offset, **filters)

    def session(self, session_id: str, *, project: str | None) -> JSON:
        return self._existing(embedder=False).session_show(session_id, project=project)

    def session_search(self, query: str, *, limit: int, project: str | None) -> JSON:
        return self._existing(embedder=False).session_search(query, limit=limit, project=project)

    def get(self, memory_id: str) -> JSON:
        return self._existing(embedder=False).get(memory_id).to_dict()

    def list(self, *, limit: int, offset: int, filters: JSON) -> JSON:
        app = self._existing(embedder=False)
        page = app.list(_filters(filters), limit=limit, offset=offset)
        return {
            "items": [memory.to_dict() for memory in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
        }

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> JSON:
        # New content gets a new vector, written with the configured model.
        app = self._existing(embedder="content" in changes)
        memory = app.modify(
            memory_id, changes, actor=self.actor, expected_version=version, reason=reason
        )
        return memory.to_dict()

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> JSON:
        app = self._existing(embedder=False)
        return app.forget(memory_id, actor=self.actor, force=force, reason=reason).to_dict()

    def recover(self, memory_id: str, *, reason: str | None) -> JSON:
        app = self._existing(embedder=False)
        return app.recover(memory_id, actor=self.actor, reason=reason).to_dict()

    def history(self, memory_id: str) -> JSON:
        events = self._existing(embedder=False).history(memory_id)
        return {"history": [event.to_dict() for event in events]}

    def status(self) -> JSON:
        # The configured embedder is needed to report it and audit its vectors; constructing
        # one loads no model (the local one loads on its first embed). The daemon adds its own
        # section; in-process there is none, and saying so keeps the keys the same for scripts.
        return {**self._existing(embedder=True).status(), "daemon": None}

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None

    def __enter__(self) -> LocalClient:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def _existing(self, *, embedder: bool) -> SignetApp:
        """The app of a workspace that exists: operations on existing memories must not leave
        a new workspace behind (only remember creates one)."""
        require_workspace(self._cfg)
        return self._open(embedder=embedder)

    def _open(self, *, embedder: bool) -> SignetApp:
        if self._app is not None and (self._with_embedder or not embedder):
            return self._app
        self.close()
        # Imported here: the daemon path of the CLI never needs the store, numpy or recall.
        from signet.app import SignetApp

        self._app = SignetApp.open(self._cfg, embedder="config" if embedder else None)
        self._with_embedder = embedder
        return self._app


def _filters(values: JSON) -> MemoryFilters:
    fields = dict(values)
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    return MemoryFilters(**fields)
