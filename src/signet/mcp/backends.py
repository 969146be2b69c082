"""What the MCP tools talk to: `DaemonBackend`, the public `signet.Client` speaking as the actor
"mcp", or `AppBackend`, the client's in-process mode around one opened SignetApp (the daemon's
own, or one `signet mcp` opened). The app is kept for the server's lifetime: searches should not
pay the open each time, and concurrent tools must never see it swapped.
"""

from __future__ import annotations

from typing import Any, Protocol

from signet import injection
from signet.app import SignetApp
from signet.client import Client, LocalClient, daemon_url, is_running, read_token, without_workers
from signet.config import Config
from signet.types import Actor

__all__ = ["ACTOR_NAME", "AppBackend", "Backend", "DaemonBackend", "connect_backend"]

ACTOR_NAME = "mcp"

JSON = dict[str, Any]


class Backend(Protocol):
    """What the tools call, each returning the contract's JSON."""

    def remember(self, content: str, fields: JSON) -> Any: ...

    def recall(
        self, query: str, *, limit: int, mode: str | None, filters: JSON, expand: bool = False,
        min_confidence: float | None = None,
    ) -> Any: ...

    def session_search(self, query: str, *, limit: int, project: str | None) -> JSON: ...

    def get(self, memory_id: str) -> Any: ...

    def list(self, *, limit: int, offset: int, filters: JSON) -> Any: ...

    def modify(
        self, memory_id: str, changes: JSON, *, version: int | None, reason: str | None
    ) -> Any: ...

    def forget(self, memory_id: str, *, force: bool, reason: str | None) -> Any: ...

    def context(self, *, project: str | None, cwd: str | None) -> JSON:
        """What the session-start hook would inject (a preview: nothing is recorded)."""
        ...

    def identity(self, name: str) -> JSON: ...

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None,
        session_id: str | None,
    ) -> JSON: ...

    def close(self) -> None: ...


class DaemonBackend(Client):
    """Every call goes to the daemon over HTTP; history records the actor "mcp"."""

    def __init__(self, cfg: Config) -> None:
        super().__init__(daemon_url(cfg), read_token(cfg), actor=ACTOR_NAME)


class AppBackend(LocalClient):
    """In-process calls on one SignetApp that the caller opened and will close."""

    actor = Actor(name=ACTOR_NAME, type="agent")

    def __init__(self, app: SignetApp) -> None:
        super().__init__(app.config)
        self._shared = app

    def _open(self, *, embedder: bool) -> SignetApp:
        return self._shared

    def close(self) -> None:
        """Nothing to do: the app belongs to whoever opened it."""

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None,
        session_id: str | None,
    ) -> JSON:
        record = self._shared.feedback(
            memory_id, feedback, actor=self.actor, correction_text=correction_text,
            session_id=session_id,
        )
        return record.to_dict()

    def context(self, *, project: str | None, cwd: str | None) -> JSON:
        request = {k: v for k, v in (("project", project), ("cwd", cwd)) if v}
        return injection.handle(self._open(embedder=True), "session-start", request, record=False).to_dict()

    def identity(self, name: str) -> JSON:
        return self._open(embedder=False).identity_file(name)


def connect_backend(cfg: Config) -> tuple[Backend, SignetApp | None]:
    """This workspace's daemon when it answers, else the store opened in-process. The app is
    returned too when one was opened here, for the caller to close."""
    if is_running(cfg):
        return DaemonBackend(cfg), None
    app = SignetApp.open(without_workers(cfg))  # no embed worker in this process
    return AppBackend(app), app
