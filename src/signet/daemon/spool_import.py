"""The daemon imports what the hooks spooled (signet/spool.py) while it was down or busy.

A worker run at start and every INTERVAL_MS: spooled transcripts go through the session-end import,
spooled prompts through the "remember that" capture, and each file is deleted once imported. A file
whose writer still runs waits up to WRITER_GRACE_S; one that cannot be imported moves to `failed/`
with its reason; a passing error (a locked database) leaves it for the next run.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from signet import spool
from signet.app import SignetApp
from signet.client.remote import process_exists
from signet.errors import Conflict, Forbidden, InvalidInput, NotFound, SignetError
from signet.injection.capture import capture_requests
from signet.injection.request import HookRequest
from signet.types import Actor
from signet.workers.scheduled import ScheduledWorker

__all__ = ["INTERVAL_MS", "import_spool", "spool_worker"]

log = logging.getLogger(__name__)

INTERVAL_MS = 10_000
WRITER_GRACE_S = 60.0  # longer than any hook lives (the harness kills its hooks at 10 s)
STALE_TEMP_S = 3600.0
# Refusals that a later run would repeat: the event is set aside with the reason.
PERMANENT: tuple[type[SignetError], ...] = (InvalidInput, NotFound, Forbidden, Conflict)


def spool_worker(app: SignetApp) -> ScheduledWorker:
    return ScheduledWorker("spool", lambda _now: import_spool(app) > 0, interval_ms=INTERVAL_MS)


def import_spool(app: SignetApp, *, now: float | None = None) -> int:
    """Import every spooled event that is ready; how many were imported."""
    workspace = str(app.config.workspace)
    at = time.time() if now is None else now
    done = 0
    for path in spool.pending(workspace):
        try:
            entry = spool.read(path)
        except FileNotFoundError:
            continue  # its hook deleted it: the daemon got it from the hook itself
        except (OSError, ValueError) as exc:
            _set_aside(path, f"unreadable spool file: {exc}")
            continue
        if _writer_busy(entry, at):
            continue
        try:
            _replay(app, entry)
        except (InvalidInput, NotFound) as exc:
            _set_aside(path, f"{type(exc).__name__}: {exc}")
            continue
        spool.remove(path)
        done += 1
    for temp in spool.stale_temp_files(workspace, STALE_TEMP_S):
        spool.remove(temp)  # a hook killed mid-write: its event never was whole
    if done:
        log.info("imported %d spooled hook event(s)", done)
    return done


def _replay(app: SignetApp, entry: spool.SpoolEntry) -> None:
    payload = {k: v for k, v in entry.payload.items() if k not in ("transcript", "transcript_path")}
    payload["harness"] = entry.harness
    request = HookRequest.parse(payload)
    if entry.event == "user-prompt-submit":
        refused = capture_requests(app, request).refused
        passing = [e for e in refused if not isinstance(e, PERMANENT)]
        if passing:
            raise passing[0]  # left for the next run
        if refused:
            raise InvalidInput("; ".join(f"a remember request was refused: {e}" for e in refused))
        return
    if entry.event not in ("session-end", "pre-compaction"):
        raise InvalidInput(f"a spooled {entry.event!r} event has nothing to import")
    if not request.session_id:
        raise InvalidInput("session_id is required to import a transcript")
    source = _source(entry)
    app.import_transcript(
        actor=Actor(name=f"hook:{request.harness}", type="agent", session_id=request.session_id),
        harness=request.harness, session_id=request.session_id, project=request.project_name,
        ended=entry.event == "session-end", **source,
    )


def _source(entry: spool.SpoolEntry) -> dict[str, Any]:
    if entry.transcript is not None:
        try:
            return {"content": entry.transcript.decode("utf-8")}
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"the transcript is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    inline = entry.payload.get("transcript")
    if isinstance(inline, str) and inline.strip():
        return {"content": inline}
    path = entry.payload.get("transcript_path")
    if isinstance(path, str) and path.strip():
        return {"path": path}  # too large to copy when spooled: read now
    raise InvalidInput("the spooled event holds no transcript")


def _writer_busy(entry: spool.SpoolEntry, now: float) -> bool:
    """The hook that wrote it still runs and may yet hand it to the daemon itself."""
    if now - entry.spooled_at > WRITER_GRACE_S or entry.pid <= 0 or entry.pid == os.getpid():
        return False
    return process_exists(entry.pid)


def _set_aside(path: str, reason: str) -> None:
    try:
        target = spool.set_aside(path, reason)
    except OSError as exc:
        log.warning("could not set aside spool file %s (%s): %s", path, reason, exc)
        return
    log.warning("spooled hook event set aside as %s: %s", target, reason)
