"""What the MCP tools talk to: the CLI's client, plus the one operation MCP adds (feedback).

`DaemonBackend` is the CLI's `DaemonClient` (HTTP to this workspace's daemon) speaking as the
actor "mcp". `AppBackend` is the CLI's `LocalClient` around an already opened SignetApp: the
daemon's own app when MCP is served inside the daemon, or one `signet mcp` opened for itself
when no daemon runs. It keeps that one app (with the configured embedder, which loads its model
only on first use) for the server's lifetime, where the CLI would reopen per command: a long
session of searches should not pay the open each time, and the tools may run concurrently in
worker threads, so the app must never be swapped under them.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import quote

from signet import injection
from signet.app import SignetApp
from signet.cli.client import Client, DaemonClient, LocalClient, connect
from signet.config import Config
from signet.types import Actor

__all__ = ["ACTOR_NAME", "AppBackend", "Backend", "DaemonBackend", "connect_backend"]

ACTOR_NAME = "mcp"

JSON = dict[str, Any]


class Backend(Client, Protocol):
    """The CLI client's operations plus agent feedback, the session-start context and the
    identity files, each returning the contract's JSON."""

    def context(self, *, project: str | None, cwd: str | None) -> JSON:
        """What the session-start hook would inject (a preview: nothing is recorded)."""
        ...

    def identity(self, name: str) -> JSON: ...

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None,
        session_id: str | None,
    ) -> JSON: ...


class DaemonBackend(DaemonClient):
    """Every call goes to the daemon over HTTP; history records the actor "mcp"."""

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self._http.headers["X-Signet-Actor"] = ACTOR_NAME

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None,
        session_id: str | None,
    ) -> JSON:
        body: JSON = {"memory_id": memory_id, "feedback": feedback}
        if correction_text is not None:
            body["correction_text"] = correction_text
        if session_id is not None:
            body["session_id"] = session_id
        return self._call("POST", "/api/memory/feedback", json=body)

    def context(self, *, project: str | None, cwd: str | None) -> JSON:
        # Without a session id the hook route records nothing: a preview.
        body = {"harness": "generic", **{k: v for k, v in (("project", project), ("cwd", cwd)) if v}}
        return self._call("POST", "/api/hooks/session-start", json=body)

    def identity(self, name: str) -> JSON:
        return self._call("GET", f"/api/identity/{quote(name, safe='')}")


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
    probe = connect(cfg)
    probe.close()
    if isinstance(probe, DaemonClient):
        return DaemonBackend(cfg), None
    app = SignetApp.open(cfg)
    return AppBackend(app), app
