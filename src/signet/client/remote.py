"""`signet.Client`: a running daemon's HTTP API as typed Python methods, for scripts, the CLI (actor
"cli") and MCP stdio (actor "mcp"). Each method is one request answering the contract's JSON
(docs/api.md) typed by `signet.client.wire`; an error is raised as the `SignetError` subclass
owning its code. The daemon is an explicit `url` and `token`, or a workspace's
(`Client.for_workspace()`); the transport is `http.client`, so importing this costs almost
nothing.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

from signet.client.closing import Closing
from signet.client.http import DaemonHttp, Reply, TransportError, error_from_reply
from signet.client.wire import HistoryJSON, MemoryJSON, PageJSON, RecallJSON, RememberJSON
from signet.config import Config
from signet.errors import SignetError

__all__ = [
    "DEFAULT_TIMEOUT_S", "Client", "answer", "daemon_url", "health_pid", "is_running",
    "pid_file_value", "process_exists", "read_token", "request_headers",
]

HEALTH_TIMEOUT_S = 0.3
# When the pid file names a live process but /health was slower than HEALTH_TIMEOUT_S (a busy
# machine), ask once more with this much patience before deciding no daemon answers.
PATIENT_HEALTH_TIMEOUT_S = 5.0
# Remember and recall may embed on the daemon's side; give them room, but never hang forever.
DEFAULT_TIMEOUT_S = 60.0

JSON = dict[str, Any]


def daemon_url(cfg: Config) -> str:
    """The loopback URL of cfg's daemon (a daemon bound to every interface is still reached
    over loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(cfg.bind, cfg.bind)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{cfg.port}"


def read_token(cfg: Config) -> str | None:
    """The token the workspace's daemon wrote for local clients, if any."""
    try:
        return cfg.token_path.read_text("utf-8").strip() or None
    except OSError:
        return None


def is_running(cfg: Config) -> bool:
    """Whether this workspace's daemon answers at cfg's address (its pid file names the pid
    that /health reports). No pid file: no daemon, and nothing is asked. A live process named
    by the pid file gets a second, patient question when the first one went unanswered, so a
    daemon slowed by a loaded machine is not taken for an absent one."""
    expected = pid_file_value(cfg)
    if expected is None:
        return False
    answering = health_pid(cfg)
    if answering is None and process_exists(expected):
        answering = health_pid(cfg, PATIENT_HEALTH_TIMEOUT_S)
    return answering == expected


def process_exists(pid: int) -> bool:
    """Whether a process `pid` runs (anyone's: signal 0 only asks)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except OSError:
        return False
    return True


def health_pid(cfg: Config, timeout_s: float = HEALTH_TIMEOUT_S) -> int | None:
    """The pid cfg's address reports on /health, or None when nothing of ours answers."""
    http = DaemonHttp(daemon_url(cfg), {}, timeout_s)
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


def pid_file_value(cfg: Config) -> int | None:
    """The pid this workspace's daemon wrote, if any."""
    try:
        text = cfg.pid_path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


class Client(Closing):
    """A running daemon at `url`, authenticated by `token` (None: the daemon's auth mode must
    not require one). `actor` names this caller in the memories' history."""

    def __init__(
        self, url: str, token: str | None = None, *, actor: str = "python",
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.base_url = url.rstrip("/")
        self._http = DaemonHttp(self.base_url, request_headers(actor, token), timeout_s)

    @classmethod
    def for_workspace(
        cls, workspace: str | Path | None = None, *, actor: str = "python",
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Client:
        """The daemon of `workspace` (default: $SIGNET_WORKSPACE, else ~/.agents), with the
        token it wrote to `<workspace>/.daemon/token`."""
        cfg = Config.load(workspace)
        return cls(daemon_url(cfg), read_token(cfg), actor=actor, timeout_s=timeout_s)

    # -- memories ---------------------------------------------------------------------------

    def remember(
        self, content: str, fields: Mapping[str, Any] | None = None, *,
        type: str | None = None, tags: list[str] | None = None,
        importance: float | None = None, pinned: bool | None = None,
        project: str | None = None, idempotency_key: str | None = None,
    ) -> RememberJSON:
        """Store `content`; `fields` takes any other body key of `POST /api/memory/remember`
        (who, why, source_id, session_id, graph, ...)."""
        body = {
            "content": content, **(fields or {}),
            **_present(type=type, tags=tags, importance=importance, pinned=pinned,
                       project=project, idempotency_key=idempotency_key),
        }
        return cast(RememberJSON, self._call("POST", "/api/memory/remember", json=body))

    def recall(
        self, query: str, *, limit: int = 10, mode: str | None = None,
        filters: Mapping[str, Any] | None = None, expand: bool = False,
        min_confidence: float | None = None,
    ) -> RecallJSON:
        """The memories that answer `query`, best first. `mode` None: the daemon's
        `search.default_mode`; `filters`: type, tags, who, project, since, until, pinned,
        importance_min, ...; `expand`: each session memory's transcript excerpt;
        `min_confidence`: drop results less confident than this."""
        body: JSON = {"query": query, "limit": limit, "filters": dict(filters or {})}
        if mode is not None:
            body["mode"] = mode
        if expand:
            body["expand"] = True
        if min_confidence is not None:
            body["min_confidence"] = min_confidence
        return cast(RecallJSON, self._call("POST", "/api/memory/recall", json=body))

    def get(self, memory_id: str) -> MemoryJSON:
        # The client reads a forgotten memory too (it says `is_deleted`), as in-process.
        return cast(MemoryJSON, self._call("GET", _memory_path(memory_id),
                                           params={"include_deleted": "true"}))

    def list(
        self, *, limit: int = 50, offset: int = 0, filters: Mapping[str, Any] | None = None
    ) -> PageJSON:
        """One page of memories, newest first, with the same filters as recall."""
        params: dict[str, str | int] = {"limit": limit, "offset": offset}
        for name, value in (filters or {}).items():
            params[name] = _query_value(value)
        return cast(PageJSON, self._call("GET", "/api/memories", params=params))

    def modify(
        self, memory_id: str, changes: Mapping[str, Any], *, version: int | None = None,
        reason: str | None = None,
    ) -> MemoryJSON:
        """Change content, tags, importance, ...; `version` makes it conditional (a memory
        changed meanwhile raises Conflict)."""
        body = {**changes, **_present(version=version, reason=reason)}
        return cast(MemoryJSON, self._call("PATCH", _memory_path(memory_id), json=body))

    def forget(
        self, memory_id: str, *, force: bool = False, reason: str | None = None
    ) -> MemoryJSON:
        """Soft-delete (recoverable until retention purges it); a pinned memory needs force."""
        params = {"force": _query_value(force), **_present(reason=reason)}
        return cast(MemoryJSON, self._call("DELETE", _memory_path(memory_id), params=params))

    def recover(self, memory_id: str, *, reason: str | None = None) -> MemoryJSON:
        path = _memory_path(memory_id, "recover")
        return cast(MemoryJSON, self._call("POST", path, json=_present(reason=reason)))

    def history(self, memory_id: str) -> HistoryJSON:
        return cast(HistoryJSON, self._call("GET", _memory_path(memory_id, "history"),
                                            params={"include_deleted": "true"}))

    def feedback(
        self, memory_id: str, feedback: str, *, correction_text: str | None = None,
        session_id: str | None = None,
    ) -> JSON:
        """An agent's verdict on a recalled memory: positive, negative or correction (with
        `correction_text`)."""
        body: JSON = {"memory_id": memory_id, "feedback": feedback}
        body.update(_present(correction_text=correction_text, session_id=session_id))
        return self._call("POST", "/api/memory/feedback", json=body)

    # -- sessions, context, identity ---------------------------------------------------------

    def import_transcript(self, session_id: str, body: Mapping[str, Any]) -> JSON:
        path = f"/api/sessions/{quote(session_id, safe='')}/transcript"
        return self._call("POST", path, json=dict(body))

    def sessions(
        self, *, limit: int = 50, offset: int = 0, filters: Mapping[str, Any] | None = None
    ) -> JSON:
        params = {"limit": limit, "offset": offset, **_present(**(filters or {}))}
        return self._call("GET", "/api/sessions", params=params)

    def session(self, session_id: str, *, project: str | None = None) -> JSON:
        path = f"/api/sessions/{quote(session_id, safe='')}"
        return self._call("GET", path, params=_present(project=project))

    def session_search(
        self, query: str, *, limit: int = 10, project: str | None = None
    ) -> JSON:
        params = {"q": query, "limit": limit, **_present(project=project)}
        return self._call("GET", "/api/sessions/search", params=params)

    def context(self, *, project: str | None = None, cwd: str | None = None) -> JSON:
        """What the session-start hook would inject, as a preview (nothing is recorded:
        without a session id the hook route keeps no ledger)."""
        body = {"harness": "generic", **_present(project=project, cwd=cwd)}
        return self._call("POST", "/api/hooks/session-start", json=body)

    def identity(self, name: str) -> JSON:
        """One identity file (AGENTS.md, SOUL.md, ...)."""
        return self._call("GET", f"/api/identity/{quote(name, safe='')}")

    def forget_session(
        self, session_id: str, *, project: str | None = None, reason: str | None = None
    ) -> JSON:
        """Remove a session for privacy: transcript and summaries (docs/sessions.md)."""
        path = f"/api/sessions/{quote(session_id, safe='')}"
        return self._call("DELETE", path, params=_present(project=project, reason=reason))

    # -- lineage -----------------------------------------------------------------------------

    def threads(self) -> JSON:
        """Thread heads, most recently active first: {items: [...]}."""
        return self._call("GET", "/api/threads")

    def thread(self, thread: str) -> JSON:
        """One thread's head ("project:NAME" or "general")."""
        return self._call("GET", f"/api/threads/{quote(thread, safe='')}")

    def lineage(self, ref: str) -> JSON:
        """Where a memory, session or artifact comes from, and what condenses it."""
        return self._call("GET", f"/api/lineage/{quote(ref, safe='')}")

    def reindex_artifacts(self) -> JSON:
        return self._call("POST", "/api/artifacts/reindex")

    def synthesize_memory_md(self) -> JSON:
        return self._call("POST", "/api/memory/synthesize")

    # -- knowledge graph ---------------------------------------------------------------------

    def entities(
        self, *, search: str | None = None, limit: int = 50, offset: int = 0
    ) -> JSON:
        """Entities, most mentioned first: {items, total, limit, offset}."""
        params = {"limit": limit, "offset": offset, **_present(q=search)}
        return self._call("GET", "/api/knowledge/entities", params=params)

    def entity(self, ref: str) -> JSON:
        """One entity, named by id, name or alias, with aspects, dependencies, memories."""
        return self._call("GET", _entity_path(ref))

    def pin_entity(
        self, ref: str, *, suppress: bool = False, weight: float | None = None,
        reason: str | None = None,
    ) -> JSON:
        body = {"suppress": suppress, **_present(weight=weight, reason=reason)}
        return self._call("POST", _entity_path(ref, "pin"), json=body)

    def unpin_entity(self, ref: str) -> JSON:
        return self._call("DELETE", _entity_path(ref, "pin"))

    def communities(self) -> JSON:
        return self._call("GET", "/api/knowledge/communities")

    def detect_communities(self) -> JSON:
        """Run Louvain community detection now; the new communities."""
        return self._call("POST", "/api/knowledge/communities/detect")

    def graph_stats(self) -> JSON:
        return self._call("GET", "/api/knowledge/stats")

    # -- documents ---------------------------------------------------------------------------

    def ingest_document(
        self, *, content: str | None = None, url: str | None = None, path: str | None = None,
        title: str | None = None, project: str | None = None,
    ) -> JSON:
        """Register a document (exactly one of content, url, or a local path the daemon
        reads); the daemon's worker chunks it. `outcome`: queued, requeued or unchanged."""
        body = _present(content=content, url=url, path=path, title=title, project=project)
        return self._call("POST", "/api/documents", json=body)

    def documents(
        self, *, status: str | None = None, limit: int = 50, offset: int = 0
    ) -> JSON:
        params = {"limit": limit, "offset": offset, **_present(status=status)}
        return self._call("GET", "/api/documents", params=params)

    def document(self, document_id: str) -> JSON:
        """One document with its status and chunk memory ids in order."""
        return self._call("GET", f"/api/documents/{quote(document_id, safe='')}")

    def delete_document(self, document_id: str) -> JSON:
        """Forget the document's chunks (recoverable) and remove it."""
        return self._call("DELETE", f"/api/documents/{quote(document_id, safe='')}")

    # -- connectors: folders of notes kept in sync as documents -------------------------------

    def connectors(self) -> JSON:
        """{connectors: [...]}, each with its health and its documents' states."""
        return self._call("GET", "/api/connectors")

    def connector(self, connector_id: str) -> JSON:
        return self._call("GET", f"/api/connectors/{quote(connector_id, safe='')}")

    def add_connector(
        self, path: str, *, name: str | None = None, project: str | None = None
    ) -> JSON:
        """Connect a folder the daemon can read (an absolute path on the daemon's machine)."""
        body = {"path": path, **_present(name=name, project=project)}
        return self._call("POST", "/api/connectors", json=body)

    def sync_connector(self, connector_id: str) -> JSON:
        """Walk the folder now: what was added, changed, removed; the worker indexes them."""
        return self._call("POST", f"/api/connectors/{quote(connector_id, safe='')}/sync")

    def enable_connector(self, connector_id: str) -> JSON:
        """Enable a connector imported from a bundle (they arrive disabled); admin only."""
        return self._call("POST", f"/api/connectors/{quote(connector_id, safe='')}/enable")

    def remove_connector(self, connector_id: str) -> JSON:
        return self._call("DELETE", f"/api/connectors/{quote(connector_id, safe='')}")

    # -- import ------------------------------------------------------------------------------

    def import_from(
        self, path: str, *, source: str = "signet", project: str | None = None
    ) -> JSON:
        """Import a Signet export folder, a mem0 JSON export (`source="mem0"`) or a folder of
        markdown notes (`"markdown"`) the daemon can read (an absolute path)."""
        body = {"path": path, "source": source, **_present(project=project)}
        return self._call("POST", "/api/import", json=body)

    # -- skills ------------------------------------------------------------------------------

    def skills(self) -> JSON:
        """{skills, errors}: skills/ reconciled with the database first."""
        return self._call("GET", "/api/skills")

    def skill(self, name: str) -> JSON:
        return self._call("GET", f"/api/skills/{quote(name, safe='')}")

    def install_skill(self, path: str, *, force: bool = False) -> JSON:
        """Install a skill folder or archive the daemon can read (an absolute path)."""
        return self._call("POST", "/api/skills", json={"path": path, "force": force})

    def remove_skill(self, name: str) -> JSON:
        return self._call("DELETE", f"/api/skills/{quote(name, safe='')}")

    # -- embeddings ----------------------------------------------------------------------------

    def embeddings_status(self) -> JSON:
        """The configured model, how many live memories have its vector, the embed queue."""
        return self._call("GET", "/api/embeddings/status")

    def re_embed(self) -> JSON:
        """Queue an embed job for every live memory without a current vector."""
        return self._call("POST", "/api/repair/re-embed")

    # -- jobs, retention, maintenance ----------------------------------------------------------

    def jobs(
        self, *, status: str | None = None, job_type: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> JSON:
        """Jobs, newest first, and the queue's depth per type and state."""
        params = {"limit": limit, "offset": offset, **_present(status=status, type=job_type)}
        return self._call("GET", "/api/pipeline/jobs", params=params)

    def job(self, job_id: str) -> JSON:
        return self._call("GET", f"/api/pipeline/jobs/{quote(job_id, safe='')}")

    def requeue_dead(self, job_ids: builtins.list[str] | None = None) -> JSON:
        """Give dead jobs (all, or these) a fresh set of attempts: {requeued: n}."""
        body: JSON = {} if job_ids is None else {"job_ids": job_ids}
        return self._call("POST", "/api/repair/requeue-dead", json=body)

    def run_retention(self, *, dry_run: bool = False) -> JSON:
        """One retention sweep now (`dry_run`: count, change nothing)."""
        return self._call("POST", "/api/retention/run", json={"dry_run": dry_run})

    def run_maintenance(self, *, execute: bool = False) -> JSON:
        """Every health check now; with `execute`, repair what fails. The run is recorded."""
        return self._call("POST", "/api/repair/run", json={"execute": execute})

    def maintenance_report(self) -> JSON:
        return self._call("GET", "/api/repair/report")

    # -- the daemon --------------------------------------------------------------------------

    def health(self) -> JSON:
        return self._call("GET", "/health")

    def status(self) -> JSON:
        return self._call("GET", "/api/status")

    def close(self) -> None:
        self._http.close()

    def _call(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> JSON:
        try:
            reply = self._http.request(
                method, path, json_body=json, params=dict(params) if params else None
            )
        except TransportError as exc:
            raise SignetError(
                f"daemon at {self.base_url} did not answer: {exc}", code="daemon_unreachable"
            ) from exc
        return answer(method, path, reply)


def request_headers(actor: str, token: str | None) -> dict[str, str]:
    """What every request carries: the actor's name, and the bearer token if there is one."""
    headers = {"X-Signet-Actor": actor}
    token = (token or "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def answer(method: str, path: str, reply: Reply) -> JSON:
    """The reply's JSON object, or the SignetError an error answer (or a malformed one) means."""
    if reply.status >= 400:
        raise error_from_reply(reply)
    try:
        body = reply.json()
    except ValueError as exc:
        raise SignetError(
            f"daemon answered {method} {path} with non-JSON", code="bad_response"
        ) from exc
    if not isinstance(body, dict):
        raise SignetError(
            f"daemon answered {method} {path} with JSON that is not an object",
            code="bad_response",
        )
    return body


def _memory_path(memory_id: str, *rest: str) -> str:
    # Quoted so an id can never step into another route ("../", "?").
    return "/".join(["/api/memory", quote(memory_id, safe=""), *rest])


def _entity_path(ref: str, *rest: str) -> str:
    return "/".join(["/api/knowledge/entities", quote(ref, safe=""), *rest])


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _present(**values: Any) -> JSON:
    return {name: value for name, value in values.items() if value is not None}
