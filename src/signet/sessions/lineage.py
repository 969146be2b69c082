"""The lineage as a service: re-indexing the artifacts, removing a session, thread heads, walking the
DAG.

`reindex` rebuilds memory_artifacts from the markdown files alone (tombstoned sessions stay out).
`forget_session` deletes a session's files, summaries and rows and leaves a tombstone naming the
paths. `lineage(id)` walks up (session -> summary -> arc -> epoch) and down. Every call takes the
caller's scope; anything outside it is "not found".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from signet.clock import Clock, SystemClock, stamp
from signet.errors import Conflict, NotFound
from signet.lineage.artifacts import artifact_id, parse
from signet.lineage.files import ARTIFACTS, TRANSCRIPTS, workspace_file
from signet.store.artifacts import ArtifactRow
from signet.store.session_store import SessionStore
from signet.store.sessions import SessionRow
from signet.types import MemoryScope
from signet.workers.summary_worker import row_of

__all__ = ["Lineage"]

MAX_WALK = 200


@dataclass
class Lineage:
    store: SessionStore
    workspace: Path
    clock: Clock = field(default_factory=SystemClock)

    # -- re-index ---------------------------------------------------------------------------

    def reindex(self) -> dict[str, Any]:
        # One at a time across every daemon on the store (an advisory lock on PostgreSQL).
        with self.store.one_at_a_time("reindex-artifacts") as held:
            if not held:
                raise Conflict("a re-index of the artifacts is running on another daemon; try again")
            return self._reindex()

    def _reindex(self) -> dict[str, Any]:
        now = stamp(self.clock)
        tombs = self.store.tombstoned()
        rows: dict[tuple[str, str], ArtifactRow] = {}
        errors: list[str] = []
        skipped = 0
        for file in self._files():
            rel = file.relative_to(self.workspace).as_posix()
            try:
                artifact = parse(rel, file.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                errors.append(str(exc))
                continue
            row = row_of(artifact, str(artifact.meta.get("agent_id") or "default"), now)
            if (row.agent_id, row.session_token or "") in tombs:
                skipped += 1
                continue
            rows[(row.agent_id, rel)] = replace(row, artifact_id=row.artifact_id or artifact_id(rel))
        parents = {
            (row.agent_id, child): row.source_path
            for row in rows.values() for child in row.condenses
        }
        removed = self.store.replace_artifacts(
            {key: replace(row, parent_path=parents.get(key)) for key, row in rows.items()}
        )
        return {"indexed": len(rows), "removed": removed, "tombstoned": skipped, "errors": errors}

    def _files(self) -> list[Path]:
        root = self.workspace / "memory"
        return sorted([*root.glob("sessions/*.md"), *root.glob("threads/*/*.md")])

    # -- privacy removal ----------------------------------------------------------------------

    def forget_session(self, session: SessionRow, reason: str | None) -> dict[str, Any]:
        artifacts = self.store.artifacts_of_session(session.session_key)
        paths = [a.source_path for a in artifacts]
        # Only files under memory/ are removed: a stored path elsewhere names nothing of ours.
        files = [p for p in paths if workspace_file(self.workspace, p, ARTIFACTS)]
        files += [p for p in (session.path, session.raw_path)
                  if p and workspace_file(self.workspace, p, TRANSCRIPTS)]
        raw = workspace_file(self.workspace, session.raw_path, TRANSCRIPTS)
        if raw is not None:
            files += [
                p.relative_to(self.workspace).as_posix() for p in raw.parent.glob(f"{raw.stem}.*.orig")
            ]
        self.store.forget_session(session, paths, files, reason, stamp(self.clock))
        for path in files:
            (self.workspace / path).unlink(missing_ok=True)
        return {"session_id": session.session_id, "removed_paths": files}

    # -- threads ----------------------------------------------------------------------------

    def threads(self, scope: MemoryScope | None) -> dict[str, Any]:
        agent, project = (scope.agent_id, scope.project) if scope else (None, None)
        return {"items": self.store.threads(agent, project)}

    def thread(self, key: str, scope: MemoryScope | None, agent_id: str = "default") -> dict[str, Any]:
        agent = scope.agent_id if scope and scope.agent_id else agent_id
        epochs = self.store.in_thread(agent, key, "epoch")
        arcs = self.store.in_thread(agent, key, "arc", uncondensed=True)
        summaries = self.store.in_thread(agent, key, "summary", uncondensed=True)
        pieces = [*epochs[-1:], *arcs, *summaries]
        if not pieces or not all(_visible(p, scope) for p in pieces):
            raise NotFound(f"thread {key} not found")
        head = "\n\n".join(f"### {p.source_kind}: {p.source_path}\n\n{p.content.strip()}" for p in pieces)
        return {
            "thread": key, "agent_id": agent, "head": head,
            "epochs": len(epochs), "pieces": [p.to_dict(with_content=False) for p in pieces],
        }

    # -- the DAG ----------------------------------------------------------------------------

    def lineage(self, ref: str, scope: MemoryScope | None) -> dict[str, Any]:
        node = self._node(ref, scope)
        if node["kind"] == "memory":
            memory = node["memory"]
            sessions = [
                s for sid in dict.fromkeys(filter(None, (memory.session_id, memory.source_id)))
                for s in self.store.find(sid, agent_id=memory.agent_id, project=memory.project)
            ]
            summaries = [a for s in sessions[:1] for a in self.store.artifacts_of_session(s.session_key)]
            up = [_session_dict(s) for s in sessions[:1]] + self._up(summaries)
            return {"node": {"kind": "memory", "id": memory.id, "content": memory.content},
                    "up": up, "down": []}
        if node["kind"] == "session":
            session = node["session"]
            summaries = self.store.artifacts_of_session(session.session_key)
            memories = self.store.memories_of(session.agent_id, session.session_id, session.project)
            return {"node": _session_dict(session), "up": self._up(summaries),
                    "down": [{"kind": "transcript", "path": session.path, "raw_path": session.raw_path},
                             *({"kind": "memory", "id": m} for m in memories)]}
        artifact = node["artifact"]
        return {"node": _artifact_dict(artifact), "up": self._up([artifact], include_self=False),
                "down": self._down(artifact)}

    def _node(self, ref: str, scope: MemoryScope | None) -> dict[str, Any]:
        found = self.store.artifact_by_id(ref)
        if found is not None and _visible(found, scope):
            return {"kind": "artifact", "artifact": found}
        memory = self.store.memory(ref, scope)
        if memory is not None:
            return {"kind": "memory", "memory": memory}
        agent, project = (scope.agent_id, scope.project) if scope else (None, None)
        sessions = self.store.find(ref, agent_id=agent, project=project)
        row = sessions[0] if sessions else self.store.get(ref)
        if row is not None and (agent is None or row.agent_id == agent) and (
            project is None or row.project == project
        ):
            return {"kind": "session", "session": row}
        # Last, the short id every table shows (the first 8 characters of a memory's id).
        try:
            memory_id = self.store.resolve_memory(ref, scope)
        except NotFound:
            memory_id = ref
        if memory_id != ref and (memory := self.store.memory(memory_id, scope)) is not None:
            return {"kind": "memory", "memory": memory}
        raise NotFound(f"{ref} is no memory, session or artifact")

    def _up(self, starts: list[ArtifactRow], *, include_self: bool = True) -> list[dict[str, Any]]:
        """Each start and its chain of parents (summary -> arc -> epoch), nearest first."""
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for start in starts:
            current: ArtifactRow | None = start
            first = True
            while current is not None and current.source_path not in seen and len(out) < MAX_WALK:
                seen.add(current.source_path)
                if include_self or not first:
                    out.append(_artifact_dict(current))
                first = False
                current = (
                    self.store.artifact(current.agent_id, current.parent_path)
                    if current.parent_path else None
                )
        return out

    def _down(self, top: ArtifactRow) -> list[dict[str, Any]]:
        """Everything `top` condenses, depth first, down to the sessions' transcripts."""
        out: list[dict[str, Any]] = []
        stack = list(reversed(top.condenses))
        while stack and len(out) < MAX_WALK:
            child = self.store.artifact(top.agent_id, stack.pop())
            if child is None:
                continue
            out.append(_artifact_dict(child))
            stack.extend(reversed(child.condenses))
            if child.session_key and (session := self.store.get(child.session_key)):
                out.append({**_session_dict(session), "under": child.source_path})
        return out


def _visible(row: ArtifactRow, scope: MemoryScope | None) -> bool:
    if scope is None:
        return True
    return (scope.agent_id is None or row.agent_id == scope.agent_id) and (
        scope.project is None or row.project == scope.project
    )


def _artifact_dict(row: ArtifactRow) -> dict[str, Any]:
    return {"kind": row.source_kind, "id": row.artifact_id, "path": row.source_path,
            "thread": row.thread_key, "gist": row.memory_sentence,
            "parent": row.parent_path, "condenses": list(row.condenses)}


def _session_dict(row: SessionRow) -> dict[str, Any]:
    return {"kind": "session", "id": row.session_id, "key": row.session_key,
            "project": row.project, "transcript": row.path, "raw": row.raw_path}

