"""The summary worker: one session summary per tick, from the summary_jobs queue.

Outside any transaction it reads the unsummarised messages, runs the significance gate, summarises
(LLM or extractive), writes the markdown artifact and prepares the summary memory; then
`finish_summary` writes the artifact row, the memory, the session status and the job's completion in
one transaction (a retry rewrites the same path). Thread roll-ups follow in their own transactions.
An LLM still failing on the last attempt gets the extractive summary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from signet.config import PipelineConfig, SessionsConfig
from signet.lineage import gate
from signet.lineage.artifacts import Artifact, parse, summary_path, thread_dir, write_new
from signet.lineage.files import ARTIFACTS, TRANSCRIPTS, read_messages, workspace_file
from signet.lineage.formats import Message
from signet.lineage.formats import parse as parse_transcript
from signet.lineage.summarize import Summary, extractive, with_llm
from signet.lineage.threads import condense, thread_key
from signet.pipeline.llm_json import CompletingLLM
from signet.pipeline.writes import MemoryWriter
from signet.store import graph as graph_sql
from signet.store.artifacts import ArtifactRow
from signet.store.session_store import SessionStore
from signet.store.sessions import SessionRow, SummaryJob, SummaryOutcome
from signet.types import Actor, format_ts
from signet.workers.leasing import describe_error, retry_delay_ms

log = logging.getLogger(__name__)

REAP_EVERY = timedelta(seconds=60)
SUMMARY_IMPORTANCE = 0.6


class SummaryWrites(Protocol):
    """How the summary memory is written: `prepare` does the slow part (embedding) now, outside
    any transaction, and returns what writes it, run inside the store's finishing transaction."""

    def prepare(self, content: str, *, actor: Actor, **fields: Any) -> Callable[[], str]: ...


@dataclass(frozen=True, slots=True)
class PreparedWrites:
    """The memory service's two-halved write path: a savepoint in the finishing transaction."""

    writer: MemoryWriter

    def prepare(self, content: str, *, actor: Actor, **fields: Any) -> Callable[[], str]:
        prepared = self.writer.prepare_memory(content, actor=actor, **fields)
        return lambda: self.writer.write_prepared(prepared).id


@dataclass
class SummaryWorker:
    store: SessionStore
    workspace: Path
    sessions: SessionsConfig
    pipeline: PipelineConfig
    writes: SummaryWrites
    llm: CompletingLLM | None = None
    name: str = "summary"
    last_reap: datetime | None = None
    paused_until: datetime | None = None

    def tick(self, now: datetime) -> bool:
        if self.pipeline.mutations_frozen or not self.pipeline.enabled:
            return False
        if self.paused_until is not None and now < self.paused_until:
            return False  # backing off after a failure (a provider that is down)
        self._reap(now)
        stamp = format_ts(now)
        job = self.store.lease_summary(stamp)
        if job is None:
            return False
        try:
            self._run(job, now)
        except Exception as exc:  # the job's failure, never the loop's
            log.warning("summary job %s failed: %s", job.id, describe_error(exc))
            self.store.fail_summary(job, describe_error(exc), stamp)
            # Back-off: min(1 s * 2^(attempt-1), 30 s) before the next job.
            self.paused_until = now + timedelta(milliseconds=retry_delay_ms(job.attempts))
        return True

    def _reap(self, now: datetime) -> None:
        if self.last_reap is not None and now - self.last_reap < REAP_EVERY:
            return
        self.last_reap = now
        self.store.reap_summary_leases(format_ts(now), self.pipeline.lease_timeout_ms)

    # -- one job ----------------------------------------------------------------------------------

    def _run(self, job: SummaryJob, now: datetime) -> None:
        session = self.store.get(job.session_key)
        if session is None:
            return self._finish(job, now, {"skipped": "session is gone"}, None)
        done = self.store.covered(session.session_key)
        span = self._messages(session)[done:]
        if not span:
            return self._finish(job, now, {"skipped": "nothing new", "messages": done}, None)
        signals = self._gate(session, span)
        if signals.skipped:
            result = {"gated": True, "gate": signals.to_dict(), "messages": done + len(span)}
            return self._finish(job, now, result, "skipped", session)
        summary, llm_error = self._summarise(job, span)
        artifact = self._write_artifact(job, session, summary, done, span, signals, now)
        write = self.writes.prepare(
            summary.markdown(), actor=Actor(name="summary", type="daemon",
                                            session_id=session.session_id, agent_id=session.agent_id),
            type="summary", source_type="session", source_id=session.session_id,
            project=session.project, importance=SUMMARY_IMPORTANCE, pinned=False,
            event_at=session.ended_at or session.last_event_at,
        )
        result = {"artifact": artifact.path, "method": summary.method,
                  "gate": signals.to_dict(), "messages": done + len(span)}
        if llm_error is not None:
            result["llm_error"] = llm_error
        self.store.finish_summary(job, SummaryOutcome(
            result, "summarized", session.session_key,
            artifact=row_of(artifact, session.agent_id, format_ts(now)), memory=write,
        ), format_ts(now))
        self.roll_up(session.agent_id, artifact.meta["thread"], session.project, now)

    def _summarise(self, job: SummaryJob, span: list[Message]) -> tuple[Summary, str | None]:
        """The LLM's summary; on the job's last attempt, when the LLM fails, the extractive one
        (the no-LLM path) with the LLM's error, so a session is never left unsummarised by a
        harness that is missing, signed out, slow or answering garbage. Earlier attempts fail
        the job, and are retried with back-off, since most LLM faults pass."""
        if self.llm is None:
            return extractive(span), None
        try:
            return with_llm(self.llm, span), None
        except Exception as exc:
            if job.attempts < job.max_attempts:
                raise
            error = describe_error(exc)
            log.warning("summary job %s: the LLM failed on the last attempt (%s); "
                        "summarised without it", job.id, error)
            return extractive(span), error

    def _messages(self, session: SessionRow) -> list[Message]:
        file = workspace_file(self.workspace, session.path, TRANSCRIPTS)
        found = read_messages(file, session.message_count) if file is not None else None
        if found is None or len(found) < session.message_count:
            return parse_transcript("generic", session.content).messages
        return found

    def _gate(self, session: SessionRow, span: list[Message]) -> gate.GateSignals:
        text = "\n".join(m.text for m in span if m.role == "user")
        names = {k: v for k, v in graph_sql.candidate_names(text).items() if k != "user"}
        return gate.judge(
            span, known_entities=self.store.known_entities(session.agent_id, names),
            unseen=self.store.unseen_terms,
            min_turns=self.sessions.gate_min_turns,
            min_novel_terms=self.sessions.gate_min_novel_terms,
        )

    def _thread(self, session: SessionRow, span: list[Message]) -> str:
        """The session's topic: its project; else the entity community most of the known
        entities it names belong to; else "general"."""
        if session.project:
            return thread_key(session.project)
        text = "\n".join(m.text for m in span if m.role == "user")
        names = [k for k in graph_sql.candidate_names(text) if k != "user"]
        community = self.store.dominant_community(session.agent_id, names)
        return f"community:{community}" if community else thread_key(None)

    def _write_artifact(
        self, job: SummaryJob, session: SessionRow, summary: Summary, done: int,
        span: list[Message], signals: gate.GateSignals, now: datetime,
    ) -> Artifact:
        count = len(span)
        day = (session.started_at or format_ts(now))[:10]
        first = 1 + len(self.store.artifacts_of_session(session.session_key))
        candidates = [summary_path(day, session.session_id, r) for r in range(first, first + 50)]
        meta = {
            "kind": "summary", "agent_id": session.agent_id, "session_id": session.session_id,
            "session_key": session.session_key, "project": session.project,
            "harness": session.harness, "thread": self._thread(session, span),
            "started_at": session.started_at, "ended_at": session.ended_at or session.last_event_at,
            "captured_at": format_ts(now), "messages": f"{done + 1}-{done + count}",
            "method": summary.method, "memory_sentence": summary.gist, "job": job.id,
            "gate": signals.to_dict(), "transcript": session.path,
        }
        return write_new(self.workspace, candidates, meta, summary.markdown(), job=job.id)

    def _finish(
        self, job: SummaryJob, now: datetime, result: dict[str, Any], status: str | None,
        session: SessionRow | None = None,
    ) -> None:
        session_key = session.session_key if session is not None else None
        self.store.finish_summary(job, SummaryOutcome(result, status, session_key), format_ts(now))

    # -- threads ----------------------------------------------------------------------------------

    def roll_up(self, agent_id: str, thread: str, project: str | None, now: datetime) -> int:
        """Condense the thread's unrolled summaries into arcs and arcs into epochs; how many
        arcs and epochs were written."""
        written = 0
        for child, parent, size in (("summary", "arc", self.sessions.arc_size),
                                    ("arc", "epoch", self.sessions.epoch_size)):
            while True:
                waiting = self.store.in_thread(agent_id, thread, child, uncondensed=True)
                if len(waiting) < size:
                    break
                self._condense(agent_id, thread, project, waiting[:size], parent, now)
                written += 1
        return written

    def _condense(
        self, agent_id: str, thread: str, project: str | None, rows: list[ArtifactRow],
        level: str, now: datetime,
    ) -> None:
        children = [_loaded(self.workspace, row) for row in rows]
        gist, body = condense(children, level=level, thread=thread)
        number = 1 + len(self.store.in_thread(agent_id, thread, level))
        folder = thread_dir(thread)
        candidates = [f"{folder}/{level}-{n:04d}.md" for n in range(number, number + 50)]
        job = f"{level}:{rows[0].source_path}"
        meta = {
            "kind": level, "agent_id": agent_id, "project": project, "thread": thread,
            "started_at": rows[0].started_at, "ended_at": rows[-1].ended_at,
            "captured_at": format_ts(now), "memory_sentence": gist, "job": job,
            "condenses": [r.source_path for r in rows],
        }
        artifact = write_new(self.workspace, candidates, meta, body, job=job)
        self.store.add_condensed(row_of(artifact, agent_id, format_ts(now)),
                                 [r.source_path for r in rows])


def _loaded(workspace: Path, row: ArtifactRow) -> Artifact:
    file = workspace_file(workspace, row.source_path, ARTIFACTS)
    try:
        if file is None:  # a stored path outside memory/: never read
            raise ValueError(f"{row.source_path}: not under {' or '.join(ARTIFACTS)}")
        return parse(row.source_path, file.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        # The index still holds the text: condense from it rather than lose the piece.
        return Artifact(row.source_path, {"memory_sentence": row.memory_sentence,
                                           "started_at": row.started_at}, row.content)


def row_of(artifact: Artifact, agent_id: str, now: str) -> ArtifactRow:
    """The index row of an artifact, from its front matter alone (what reindex relies on)."""
    meta = artifact.meta
    return ArtifactRow(
        agent_id=str(meta.get("agent_id") or agent_id), source_path=artifact.path,
        source_sha256=artifact.sha256, source_kind=str(meta["kind"]),
        session_id=meta.get("session_id"), session_key=meta.get("session_key"),
        session_token=meta.get("session_key"), project=meta.get("project"),
        harness=meta.get("harness"), captured_at=_text(meta.get("captured_at")),
        started_at=_text(meta.get("started_at")), ended_at=_text(meta.get("ended_at")),
        memory_sentence=meta.get("memory_sentence"), content=artifact.body, updated_at=now,
        artifact_id=meta.get("artifact_id"), thread_key=meta.get("thread"),
        condenses=tuple(meta.get("condenses") or ()), parent_path=None,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
