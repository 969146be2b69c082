"""Importing a harness transcript: lossless, idempotent, append-only. `import_transcript` keeps,
under `memory/transcripts/{harness}/`, the cleaned conversation as JSONL and the original byte
for byte. The same or a shorter version changes nothing; a longer one appends; one that differs
inside the stored part appends its new tail ("diverged") and keeps the other original beside.
Files are written whole before the row pointing at them commits.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from signet.clock import Clock, SystemClock, stamp
from signet.errors import Conflict, InvalidInput
from signet.lineage.files import (
    TRANSCRIPTS,
    read_messages,
    safe_name,
    workspace_file,
    write_atomic,
    write_messages,
)
from signet.lineage.formats import Message, Parsed, parse
from signet.store import sessions as sessions_sql
from signet.store.session_store import SessionStore
from signet.store.sessions import SessionRow

__all__ = ["ImportResult", "Importer", "render"]

MAX_SESSION_ID = 200
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class ImportResult:
    session: SessionRow
    status: str  # created | appended | unchanged | diverged
    added: int
    summary_job: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session.to_dict(), "status": self.status, "added": self.added,
            "summary_job": self.summary_job,
        }


def render(messages: list[Message]) -> str:
    """The cleaned text: one "User: ..." / "Assistant: ..." paragraph per message."""
    return "\n".join(f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}" for m in messages)


@dataclass
class Importer:
    store: SessionStore
    workspace: Path
    max_attempts: int = 3
    clock: Clock = field(default_factory=SystemClock)

    def run(
        self, *, harness: str, text: str, session_id: str | None, project: str | None,
        agent_id: str, ended: bool = True,
    ) -> ImportResult:
        parsed = parse(harness, text)
        sid = _session_id(session_id or parsed.session_id)
        # As the session-end hook does: the project is the folder the session ran in.
        project = project or _project_of(parsed.cwd)
        key = sessions_sql.session_key(agent_id, project, sid)
        raw_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        with _LOCK:
            existing = self.store.get(key)
            if existing is None:
                row = self._create(key, sid, harness, project, agent_id, parsed, text, raw_hash, ended)
                return self._commit(row, None, "created", len(parsed.messages), ended)
            return self._update(existing, parsed, text, raw_hash, ended)

    # -- first import ---------------------------------------------------------------------

    def _create(
        self, key: str, sid: str, harness: str, project: str | None, agent_id: str,
        parsed: Parsed, text: str, raw_hash: str, ended: bool,
    ) -> SessionRow:
        now = stamp(self.clock)
        path, raw_path = self._free_paths(harness, f"{safe_name(sid)}--{key[3:11]}")
        write_atomic(self.workspace / raw_path, text)
        write_messages(self.workspace / path, parsed.messages)
        last = parsed.last_at or now
        return SessionRow(
            session_key=key, session_id=sid, agent_id=agent_id, project=project, harness=harness,
            content=render(parsed.messages), raw_hash=raw_hash,
            content_hash=_digest(parsed.messages), message_count=len(parsed.messages),
            started_at=parsed.started_at or now, last_event_at=last,
            ended_at=last if ended else None, path=str(path), raw_path=str(raw_path),
            summary_status=None, created_at=now, updated_at=now,
        )

    def _free_paths(self, harness: str, stem: str) -> tuple[Path, Path]:
        """The cleaned and raw transcript paths for a new session: `stem`, or `stem-2`, ...
        when a file already holds that name. The name is the id, cleaned, and a short hash of
        the key, so two sessions (of two scopes) can be given one; a new session must never
        replace or share another's transcript. Called under the import lock."""
        folder = Path("memory") / "transcripts" / safe_name(harness)
        name, n = stem, 1
        while True:
            path, raw_path = folder / f"{name}.jsonl", folder / "raw" / f"{name}.orig"
            if not (self.workspace / path).exists() and not (self.workspace / raw_path).exists():
                return path, raw_path
            n += 1
            name = f"{stem}-{n}"

    # -- later imports --------------------------------------------------------------------

    def _update(
        self, existing: SessionRow, parsed: Parsed, text: str, raw_hash: str, ended: bool
    ) -> ImportResult:
        if existing.raw_hash == raw_hash:
            return self._commit(existing, existing, "unchanged", 0, ended)
        files = self._files(existing)
        stored = self._stored_messages(existing)
        new = parsed.messages
        common = _common_prefix(stored, new)
        if common == len(new):  # the same messages, or an older, shorter version
            if len(new) == len(stored):  # the same talk, other tool output: keep both originals
                self._replace_raw(files[1], existing, text)
                existing = replace(existing, raw_hash=raw_hash)
            return self._commit(existing, existing, "unchanged", 0, ended)
        status = "appended" if common == len(stored) else "diverged"
        self._replace_raw(files[1], existing, text)
        merged = stored + new[common:]
        write_messages(files[0], merged)
        last = parsed.last_at or stamp(self.clock)
        row = replace(
            existing, content=render(merged), raw_hash=raw_hash, content_hash=_digest(merged),
            message_count=len(merged), last_event_at=max(last, existing.last_event_at or last),
            ended_at=last if ended else None, updated_at=stamp(self.clock),
        )
        return self._commit(row, existing, status, len(new) - common, ended)

    def _files(self, row: SessionRow) -> tuple[Path, Path]:
        """The session's cleaned and raw files, when both lie under memory/transcripts of the
        workspace; a Conflict otherwise, before anything is written."""
        cleaned = workspace_file(self.workspace, row.path, TRANSCRIPTS)
        raw = workspace_file(self.workspace, row.raw_path, TRANSCRIPTS)
        if cleaned is None or raw is None:
            raise Conflict(
                f"session {row.session_id}: its stored transcript files are not under"
                f" {TRANSCRIPTS[0]} of the workspace; nothing is written there (forget the"
                " session and import it again)"
            )
        return cleaned, raw

    def _stored_messages(self, row: SessionRow) -> list[Message]:
        file = workspace_file(self.workspace, row.path, TRANSCRIPTS)
        found = read_messages(file, row.message_count) if file is not None else None
        if found is None or len(found) < row.message_count:
            # The cleaned file is gone or damaged: the row's text still holds every message.
            found = parse("generic", row.content).messages
        return found

    def _replace_raw(self, current: Path, row: SessionRow, text: str) -> None:
        """The new original replaces the stored one (at `current`); the stored one is kept
        beside it under its hash unless the new one contains it (a harness that only appends)."""
        if current.is_file():
            previous = current.read_bytes()
            if not text.encode("utf-8").startswith(previous):
                kept = current.with_name(f"{current.stem}.{(row.raw_hash or 'old')[:12]}.orig")
                write_atomic(kept, previous)
        write_atomic(current, text)

    # -- the row ----------------------------------------------------------------------------

    def _commit(
        self, row: SessionRow, before: SessionRow | None, status: str, added: int, ended: bool
    ) -> ImportResult:
        now = stamp(self.clock)
        if before is not None and ended and row.ended_at is None:
            row = replace(row, ended_at=row.last_event_at or now)
        summarise = ended and (status != "unchanged" or before is None or before.ended_at is None)
        # The row and its summary job in one transaction (store/session_store.py).
        stored, job = self.store.save_import(
            row, created=before is None, summary_trigger="session_end" if summarise else None,
            now=now, max_attempts=self.max_attempts,
        )
        return ImportResult(stored, status, added, job)


def _project_of(cwd: str | None) -> str | None:
    """The project a session ran in: its working folder's last name (the hooks' rule too)."""
    return (PurePath(cwd).name or None) if cwd else None


def _session_id(value: str | None) -> str:
    if value is None or not value.strip():
        raise InvalidInput("the session id is unknown: the transcript names none; pass one")
    value = value.strip()
    if len(value) > MAX_SESSION_ID:
        raise InvalidInput(f"session id is {len(value)} characters; the maximum is {MAX_SESSION_ID}")
    return value


def _common_prefix(old: list[Message], new: list[Message]) -> int:
    count = 0
    for a, b in zip(old, new, strict=False):
        if (a.role, a.text) != (b.role, b.text):
            break
        count += 1
    return count


def _digest(messages: list[Message]) -> str:
    h = hashlib.sha256()
    for m in messages:
        h.update(f"{m.role}\x1f{m.text}\x1e".encode())
    return h.hexdigest()
