"""Controlled writes: the pipeline's proposals turned into changes, or into records only.

`plan_proposal` (no transaction) decides under the flags and checks contradictions; `apply_plan`
(in the caller's `PipelineTx`) re-reads the target, archives it to the cold tier, applies and
records. Shadow mode, rejected and `none` proposals only record. Update and delete need
autonomous.allowUpdateDelete, a pinned memory is never deleted, and a contradicting update goes to
review unless it marks itself as superseding.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from signet.config import PipelineConfig
from signet.errors import Conflict, InvalidInput, NotFound
from signet.normalize import NormalizedContent
from signet.pipeline.contradiction import (
    ContradictionVerdict,
    check_contradiction,
    has_temporal_supersession,
)
from signet.pipeline.decision import Proposal
from signet.pipeline.llm_json import CompletingLLM
from signet.pipeline.tokens import normalize_text
from signet.store import review as review_sql
from signet.store.pipeline import PipelineStore, PipelineTx
from signet.types import Actor, Memory, NewMemory, RememberResult

__all__ = [
    "PIPELINE_ACTOR",
    "SHADOW_ACTOR",
    "MemoryWriter",
    "Planned",
    "PreparedMemory",
    "WriteFlags",
    "apply_plan",
    "plan_proposal",
    "proposal_dict",
    "resolve_review",
]

log = logging.getLogger(__name__)

PIPELINE_ACTOR = Actor(name="pipeline", type="daemon")
SHADOW_ACTOR = Actor(name="pipeline-shadow", type="daemon")

Outcome = Literal[
    "shadow", "rejected", "none", "low_confidence", "not_allowed", "pinned", "invalid",
    "missing_target", "no_change", "review", "add", "update", "delete",
]


@dataclass(frozen=True, slots=True)
class PreparedMemory:
    """A memory validated, normalised and embedded, ready for the write transaction."""

    memory: NewMemory
    norm: NormalizedContent
    vector: np.ndarray | None
    actor: Actor


class MemoryWriter(Protocol):
    """The one write path of a memory, in its two halves (services/memory.py implements it)."""

    def prepare_memory(self, content: str, *, actor: Actor, **fields: Any) -> PreparedMemory:
        """Validate, normalise and embed: no write transaction may be open."""
        ...

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult:
        """Insert as `remember` does (a savepoint inside the caller's transaction)."""
        ...


@dataclass(frozen=True, slots=True)
class WriteFlags:
    shadow: bool
    min_confidence: float
    allow_update_delete: bool
    contradiction_threshold: float
    hints: bool
    max_attempts: int = 3

    @classmethod
    def from_config(cls, cfg: PipelineConfig) -> WriteFlags:
        return cls(
            shadow=cfg.shadow_mode,
            min_confidence=cfg.min_fact_confidence_for_write,
            allow_update_delete=cfg.autonomous.allow_update_delete,
            contradiction_threshold=cfg.contradiction_threshold,
            hints=cfg.hints.enabled,
            max_attempts=cfg.max_attempts,
        )


@dataclass(frozen=True, slots=True)
class Planned:
    """What will happen to one proposal, decided before the write transaction opens."""

    proposal: Proposal
    outcome: Outcome
    reason: str
    target: Memory | None = None
    prepared: PreparedMemory | None = None
    verdict: ContradictionVerdict | None = None


def proposal_dict(proposal: Proposal) -> dict[str, Any]:
    fact = proposal.fact
    return {
        "action": proposal.action,
        "fact": {"content": fact.content, "type": fact.type, "confidence": fact.confidence},
        "targetId": proposal.target_id,
        "confidence": proposal.confidence,
        "reason": proposal.reason,
        "rejected": proposal.rejected,
    }


def verdict_dict(verdict: ContradictionVerdict) -> dict[str, Any]:
    return {
        "contradicts": verdict.contradicts,
        "confidence": verdict.confidence,
        "usedLlm": verdict.used_llm,
        "reason": verdict.reason,
        "signals": [
            {"kind": s.kind, "confidence": s.confidence, "detail": s.detail}
            for s in verdict.signals
        ],
    }


# -- phase 1: planning (no transaction) ------------------------------------------------------


def plan_proposal(
    proposal: Proposal,
    *,
    source: Memory,
    flags: WriteFlags,
    targets: dict[str, Memory],
    writer: MemoryWriter,
    llm: CompletingLLM | None,
) -> Planned:
    """The outcome of one proposal under the flags (see the module docstring for the rules)."""
    if flags.shadow:
        return Planned(proposal, "shadow", "shadow mode: proposal recorded, nothing written")
    if proposal.rejected:
        return Planned(proposal, "rejected", proposal.rejected)
    if proposal.action == "none":
        return Planned(proposal, "none", proposal.reason or "nothing to do")
    if proposal.fact.confidence < flags.min_confidence:
        return Planned(
            proposal, "low_confidence",
            f"fact confidence {proposal.fact.confidence:.2f} is below "
            f"minFactConfidenceForWrite {flags.min_confidence:.2f}",
        )
    if proposal.action == "add":
        return _plan_add(proposal, source, writer)
    return _plan_change(proposal, flags, targets, writer, llm)


def _plan_add(proposal: Proposal, source: Memory, writer: MemoryWriter) -> Planned:
    fact = proposal.fact
    try:
        prepared = writer.prepare_memory(
            fact.content, actor=_pipeline_actor(source), type=fact.type,
            confidence=fact.confidence, source_type="pipeline", source_id=_cited_source(source),
            project=source.project, who=source.who,
            # A "critical:" prefix in model output must not pin a memory: pinning is a person's call.
            pinned=False, importance=0.5,
        )
    except InvalidInput as exc:
        return Planned(proposal, "invalid", str(exc))
    return Planned(proposal, "add", "new fact", prepared=prepared)


def _plan_change(
    proposal: Proposal,
    flags: WriteFlags,
    targets: dict[str, Memory],
    writer: MemoryWriter,
    llm: CompletingLLM | None,
) -> Planned:
    if not flags.allow_update_delete:
        return Planned(proposal, "not_allowed", "autonomous.allowUpdateDelete is off")
    target = targets.get(proposal.target_id or "")
    if target is None or target.is_deleted:
        return Planned(proposal, "missing_target", f"target {proposal.target_id} is not live")
    if proposal.action == "delete":
        if target.pinned:
            return Planned(proposal, "pinned", "pinned memories are never deleted by the pipeline", target)
        return Planned(proposal, "delete", proposal.reason or "superseded", target)
    if normalize_text(target.content) == normalize_text(proposal.fact.content):
        return Planned(proposal, "no_change", "the target already says this", target)
    verdict = check_contradiction(
        target.content, proposal.fact.content, llm, flags.contradiction_threshold
    )
    if verdict.contradicts and not has_temporal_supersession(proposal.fact.content):
        reason = f"contradicts the target ({verdict.confidence:.2f}): {verdict.reason}"
        return Planned(proposal, "review", reason, target, verdict=verdict)
    try:
        prepared = writer.prepare_memory(proposal.fact.content, actor=PIPELINE_ACTOR)
    except InvalidInput as exc:
        return Planned(proposal, "invalid", str(exc), target)
    return Planned(proposal, "update", proposal.reason or "refined", target, prepared, verdict)


def _pipeline_actor(source: Memory) -> Actor:
    return Actor(name="pipeline", type="daemon", agent_id=source.agent_id, session_id=source.session_id)


def _cited_source(source: Memory) -> str:
    """What a new fact cites: the session, for facts from a session summary (the lineage walks
    from the fact to its session, then to the summary and up); else the source memory."""
    if source.source_type == "session" and source.source_id:
        return source.source_id
    return source.id


# -- phase 2: applying (inside the caller's write transaction) --------------------------------


@dataclass(frozen=True, slots=True)
class Applied:
    outcome: str
    reason: str
    memory_id: str | None = None


def apply_plan(
    tx: PipelineTx,
    planned: Planned,
    *,
    source: Memory,
    writer: MemoryWriter,
    flags: WriteFlags,
    embedder_model: str | None,
    now: str,
) -> Applied:
    """Apply one planned proposal and record it on the source memory's history."""
    if planned.outcome == "add":
        applied = _add(writer, planned)
    elif planned.outcome in ("update", "delete", "review"):
        applied = _change(tx, planned, source.id, flags, embedder_model, now)
    else:  # nothing to write: the outcome is only recorded
        target_id = planned.target.id if planned.target else None
        applied = Applied(planned.outcome, planned.reason, target_id)
    actor = SHADOW_ACTOR if planned.outcome == "shadow" else PIPELINE_ACTOR
    metadata: dict[str, Any] = {
        "proposal": proposal_dict(planned.proposal),
        "outcome": applied.outcome,
        "outcomeReason": applied.reason,
    }
    if applied.memory_id:
        metadata["memoryId"] = applied.memory_id
    if planned.verdict is not None:
        metadata["contradiction"] = verdict_dict(planned.verdict)
    tx.record(
        source.id, "none", actor, now, new_content=planned.proposal.fact.content,
        reason=f"pipeline proposal: {planned.proposal.action}", metadata=metadata,
    )
    return applied


def _add(writer: MemoryWriter, planned: Planned) -> Applied:
    assert planned.prepared is not None
    result = writer.write_prepared(planned.prepared)
    if result.deduped:
        return Applied("duplicate", f"memory {result.id} already holds this fact", result.id)
    return Applied("add", planned.reason, result.id)


def _change(
    tx: PipelineTx,
    planned: Planned,
    source_id: str,
    flags: WriteFlags,
    embedder_model: str | None,
    now: str,
) -> Applied:
    """An update, delete or review of the target, unless it changed since the plan."""
    outcome, reason = planned.outcome, planned.reason
    assert planned.target is not None
    current = tx.get_memory(planned.target.id)
    if current is None or current.is_deleted or current.version != planned.target.version:
        return Applied("stale_target", "the target changed after the decision", planned.target.id)
    if outcome == "review":
        item = tx.add_review(
            memory_id=current.id, source_memory_id=source_id, action="update",
            old_content=current.content, new_content=planned.proposal.fact.content,
            proposal=proposal_dict(planned.proposal),
            verdict=verdict_dict(planned.verdict) if planned.verdict else None,
            reason=reason, now=now, target_version=current.version,
        )
        return Applied("review", f"{reason} (review item {item})", current.id)
    if outcome == "delete":
        archive_and_delete(tx, current, PIPELINE_ACTOR, reason, now, source_id=source_id)
        return Applied("delete", reason, current.id)
    assert planned.prepared is not None
    try:
        archive_and_update(
            tx, current, planned.prepared, PIPELINE_ACTOR, reason, now, source_id=source_id,
            embedder_model=embedder_model, hints=flags.hints, max_attempts=flags.max_attempts,
        )
    except Conflict as exc:
        return Applied("duplicate", str(exc), current.id)
    return Applied("update", reason, current.id)


def archive_and_update(
    tx: PipelineTx,
    current: Memory,
    prepared: PreparedMemory,
    actor: Actor,
    reason: str,
    now: str,
    *,
    source_id: str | None,
    embedder_model: str | None,
    hints: bool,
    max_attempts: int = 3,
) -> None:
    """Cold-archive `current`, then replace its content (one transaction: the caller's)."""
    norm = prepared.norm
    other = tx.find_live_by_hash(norm.content_hash, current.agent_id, current.project)
    if other and other != current.id:
        raise Conflict(f"memory {other} already holds this content")
    cold_id = tx.archive_cold(current, reason=reason, archived_by=actor.name, now=now)
    tx.update_columns(
        current.id,
        {"content": norm.storage, "normalized_content": norm.normalized,
         "content_hash": norm.content_hash, "hints": ""},
        now,
    )
    tx.record(
        current.id, "updated", actor, now, old_content=current.content,
        new_content=norm.storage, reason=reason,
        metadata={"changed": ["content"], "coldId": cold_id, "sourceMemoryId": source_id},
    )
    _store_vector(
        tx, current.id, norm.content_hash, prepared.vector, embedder_model, now, max_attempts
    )
    # The new text may name other things: re-link it to the entities it names now.
    tx.relink(current.id, current.agent_id, norm.storage, now)
    if hints:
        tx.enqueue("hints", current.id, now, max_attempts=max_attempts)


def _store_vector(
    tx: PipelineTx, memory_id: str, content_hash: str, vector: np.ndarray | None,
    embedder_model: str | None, now: str, max_attempts: int,
) -> None:
    if embedder_model is None or tx.has_vector(content_hash, embedder_model):
        return
    if vector is None:
        tx.enqueue("embed", memory_id, now, max_attempts=max_attempts)
        return
    tx.store_vector(content_hash, vector, model=embedder_model, now=now, memory_id=memory_id)


def archive_and_delete(
    tx: PipelineTx, current: Memory, actor: Actor, reason: str, now: str, *,
    source_id: str | None,
) -> int:
    """Cold-archive `current`, then soft-delete it; return the cold row id."""
    cold_id = tx.archive_cold(current, reason=reason, archived_by=actor.name, now=now)
    tx.soft_delete(current.id, now)
    tx.record(
        current.id, "deleted", actor, now, old_content=current.content, reason=reason,
        metadata={"coldId": cold_id, "sourceMemoryId": source_id},
    )
    return cold_id


# -- the review queue -------------------------------------------------------------------------


def resolve_review(
    store: PipelineStore,
    writer: MemoryWriter,
    item_id: str,
    *,
    approve: bool,
    actor: Actor,
    embedder_model: str | None,
    hints: bool,
    now: str,
) -> review_sql.ReviewItem:
    """Approve (apply the parked update, archive first) or reject one pending review item."""
    item_id = store.review_id(item_id)
    with store.write() as tx:  # a short read (the prepare below embeds: outside any tx)
        item = tx.get_review(item_id)
    if item is None:
        raise NotFound(f"review item {item_id} not found")
    if item.status != "pending":
        raise Conflict(f"review item {item_id} is already {item.status}")
    prepared = None
    if approve:
        if not item.new_content:
            raise InvalidInput(f"review item {item_id} has no new content to apply")
        prepared = writer.prepare_memory(item.new_content, actor=actor)  # embeds: outside the tx
    with store.write() as tx:
        if not tx.resolve_review(item_id, "approved" if approve else "rejected", actor.name, now):
            raise Conflict(f"review item {item_id} was resolved meanwhile")
        if prepared is not None:
            _apply_approved(tx, item, prepared, actor, embedder_model, hints, now)
        resolved = tx.get_review(item_id)
    assert resolved is not None
    return resolved


def _check_not_moved(item: review_sql.ReviewItem, current: Memory) -> None:
    """Refuse to apply a review made for an older version of its memory: approving it would
    overwrite whatever changed since (an operator's edit, a later pipeline update) with a
    proposal that never saw it. The conflict carries both texts so the caller can decide."""
    if item.target_version is not None:
        moved = current.version != item.target_version
    else:  # parked before migration 020: compare the text the review was made against
        moved = current.content != item.old_content
    if not moved:
        return
    raise Conflict(
        f"memory {current.id} changed since review {item.id} was made "
        f"(version {item.target_version if item.target_version is not None else '?'} then, "
        f"{current.version} now); its current text is kept. Current: {current.content!r}; "
        f"the review would write: {item.new_content!r}. Reject the review, or modify the "
        "memory directly",
        code="review_stale",
        details={
            "memory_id": current.id, "review_id": item.id,
            "review_version": item.target_version, "current_version": current.version,
            "current_content": current.content, "review_old_content": item.old_content,
            "review_new_content": item.new_content,
        },
    )


def _apply_approved(
    tx: PipelineTx,
    item: review_sql.ReviewItem,
    prepared: PreparedMemory,
    actor: Actor,
    embedder_model: str | None,
    hints: bool,
    now: str,
) -> None:
    current = tx.get_memory(item.memory_id)
    if current is None or current.is_deleted:
        raise Conflict(f"memory {item.memory_id} is no longer live; reject the review instead")
    _check_not_moved(item, current)
    archive_and_update(
        tx, current, prepared, actor, f"review {item.id} approved", now,
        source_id=item.source_memory_id, embedder_model=embedder_model, hints=hints,
    )
