"""The extraction worker: one `extract` job per tick, from raw memory to controlled writes.

Three phases, so no LLM or embedding call runs under the write lock: with no transaction, extract,
find candidates and plan (pipeline/writes.py); in one write transaction, complete the job and apply
the plans (a lost lease rolls it all back); then the graph in its own transaction, whose failure
never reverts the facts. With mutationsFrozen or the pipeline disabled it does nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from signet.config import PipelineConfig
from signet.pipeline.contradiction import shared_tokens
from signet.pipeline.decision import MAX_CANDIDATES, Candidate, Proposal, decide
from signet.pipeline.extraction import Extraction, extract
from signet.pipeline.graph_persist import persist_graph
from signet.pipeline.llm_json import CompletingLLM
from signet.pipeline.rule_extractor import extract_without_llm, extraction_mode
from signet.pipeline.supersession import states_current, supersedes
from signet.pipeline.writes import MemoryWriter, Planned, WriteFlags, apply_plan, plan_proposal
from signet.store import jobs
from signet.store.graph_store import GraphStore
from signet.store.pipeline import PipelineStore, PipelineTx
from signet.types import Actor, Memory, MemoryFilters, RecallQuery, RecallResponse, format_ts
from signet.workers.leasing import complete_job
from signet.workers.pipeline_worker import PipelineWorker

log = logging.getLogger(__name__)

# How close in meaning an older memory must be to one that replaces it (the bundled MiniLM:
# "We decided to use PostgreSQL" / "we now use MongoDB" 0.52; an unrelated "The deployment
# pipeline runs on GitHub Actions" 0.03, "The billing service is written in Go" 0.21).
SUPERSEDE_COSINE = 0.4

RULES_MODEL = "rules"


class Recalls(Protocol):
    """What the worker needs of recall: the app's hybrid search for candidates."""

    def recall(self, query: RecallQuery) -> RecallResponse: ...


@dataclass(frozen=True, slots=True)
class _Work:
    """Everything phase 1 found out, handed to the write phases."""

    source: Memory
    extraction: Extraction
    plans: list[Planned]
    # Older memories the source replaces on the same subject (pipeline/supersession.py).
    replaced: tuple[str, ...] = ()
    # Per plan (same order): older memories its fact replaces, once that fact is added.
    fact_replaced: tuple[tuple[str, ...], ...] = ()


class ExtractWorker(PipelineWorker):
    name = "extract"

    def __init__(
        self,
        store: PipelineStore,
        recaller: Recalls,
        writer: MemoryWriter,
        config: PipelineConfig,
        llm: CompletingLLM | None,
        *,
        llm_model: str | None = None,
        embedder_model: str | None = None,
        retry_base_ms: int = 1_000,
        graph: GraphStore,
    ) -> None:
        super().__init__(
            store, config, llm, retry_base_ms=retry_base_ms,
            on_dead=lambda tx, job: self._mark(tx, job, "failed"),
        )
        self.graph = graph
        self.recaller = recaller
        self.writer = writer
        self.flags = WriteFlags.from_config(config)
        self.llm_model = llm_model or (RULES_MODEL if llm is None else "llm")
        self.embedder_model = embedder_model

    # -- the three phases ------------------------------------------------------------------

    def _run(self, job: jobs.Job, source: Memory, now: datetime) -> None:
        work = self._think(source)
        written = self._write(job, work, now)
        self._persist_graph(work, written, now)

    def _think(self, source: Memory) -> _Work:
        """Phase 1: every LLM, search and embedding call; nothing is written."""
        if self.llm is None:
            extraction = self._without_llm(source.content)
        else:
            extraction = extract(self.llm, source.content)
        plans = []
        fact_replaced = []
        for fact in extraction.facts:
            if fact.confidence < self.flags.min_confidence:
                # The write gate refuses it whatever the decision: no search (a query
                # embedding and a recall per fact) for a proposal that is only recorded.
                candidates: list[Candidate] = []
                targets: dict[str, Memory] = {}
            else:
                candidates, targets = self._candidates(source, fact.content)
            proposal = decide(self.llm, fact, candidates)
            plans.append(self._plan(proposal, source, targets))
            # A decision distilled from a session ("we now use X") replaces the older one
            # just as a memory stating it would.
            fact_replaced.append(self._replaced(source, fact.content)
                                 if plans[-1].outcome == "add" else ())
        return _Work(source, extraction, plans, self._replaced(source, source.content),
                     tuple(fact_replaced))

    def _replaced(self, source: Memory, text: str) -> tuple[str, ...]:
        """The older memories of the source's agent and project that `text` (the source's, or
        a fact extracted from it) replaces: it marks itself current ("now", "no longer") and
        states another value of what they state, or it gives an entity attribute a newer value
        (pipeline/supersession.py). Only near ones count: close in meaning (cosine), or
        sharing two content words without one."""
        if not states_current(text):
            return ()
        query = RecallQuery(
            text, limit=MAX_CANDIDATES + 1, mode="hybrid", touch=False,
            filters=MemoryFilters(agent_id=source.agent_id),
        )
        found = []
        for hit in self.recaller.recall(query).hits:
            old = hit.memory
            if (old.id == source.id or old.superseded_by is not None
                    or old.project != source.project or not _older(old, source)):
                continue
            cosine = hit.evidence.cosine
            near = (cosine >= SUPERSEDE_COSINE if cosine is not None
                    else len(shared_tokens(old.content, text)) >= 2)
            if near and supersedes(old.content, text):
                found.append(old.id)
        return tuple(found)

    def _without_llm(self, content: str) -> Extraction:
        """The rule extractor's names always (the graph); its facts only where the write gate
        admits them (`extraction_mode` "rules"), else none: facts need an LLM."""
        extraction = extract_without_llm(content)
        if extraction_mode(False, self.flags.min_confidence) == "rules" or not extraction.facts:
            return extraction
        note = (f"no LLM: {len(extraction.facts)} rule fact(s) not proposed (confidence "
                f"{extraction.facts[0].confidence} < minFactConfidenceForWrite "
                f"{self.flags.min_confidence}); facts need an LLM")
        return replace(extraction, facts=(), warnings=(*extraction.warnings, note))

    def _plan(self, proposal: Proposal, source: Memory, targets: dict[str, Memory]) -> Planned:
        return plan_proposal(
            proposal, source=source, flags=self.flags, targets=targets, writer=self.writer,
            llm=self.llm,
        )

    def _candidates(self, source: Memory, text: str) -> tuple[list[Candidate], dict[str, Memory]]:
        query = RecallQuery(
            text, limit=MAX_CANDIDATES + 1, mode="hybrid", touch=False,
            filters=MemoryFilters(agent_id=source.agent_id),
        )
        hits = [h for h in self.recaller.recall(query).hits if h.memory.id != source.id]
        hits = hits[:MAX_CANDIDATES]
        candidates = [Candidate(h.memory.id, h.memory.content, h.score) for h in hits]
        return candidates, {h.memory.id: h.memory for h in hits}

    def _write(self, job: jobs.Job, work: _Work, now: datetime) -> list[tuple[str, str]]:
        """Phase 2: one transaction for the job's end, every write and every record."""
        stamp = format_ts(now)
        outcomes: dict[str, int] = {}
        written: list[tuple[str, str]] = []
        replacements: list[tuple[str, str]] = []
        with self.store.write() as tx:
            for i, planned in enumerate(work.plans):
                applied = apply_plan(
                    tx, planned, source=work.source, writer=self.writer, flags=self.flags,
                    embedder_model=self.embedder_model, now=stamp,
                )
                outcomes[applied.outcome] = outcomes.get(applied.outcome, 0) + 1
                if applied.outcome in ("add", "update") and applied.memory_id:
                    written.append((applied.memory_id, planned.proposal.fact.content))
                if applied.outcome == "add" and applied.memory_id and i < len(work.fact_replaced):
                    replacements += [(old, applied.memory_id) for old in work.fact_replaced[i]]
            # One replacement per old memory: an added fact (the atomic statement) before the
            # source that holds it (a session summary, say).
            replacements += [(old, work.source.id) for old in work.replaced]
            replacements = list(dict(reversed(replacements)).items())
            if not self.flags.shadow:
                self._supersede(tx, work.source.agent_id, replacements, stamp)
            self._mark(tx, job, "completed")
            result: dict[str, Any] = {
                "facts": len(work.extraction.facts),
                "entities": len(work.extraction.entities),
                "outcomes": outcomes,
                "warnings": list(work.extraction.warnings)[:20],
                "shadow": self.flags.shadow,
                "superseded": [old for old, _new in replacements],
            }
            complete_job(tx, job, now, result)
        return written

    def _supersede(
        self, tx: PipelineTx, agent_id: str, replacements: list[tuple[str, str]], stamp: str
    ) -> None:
        """Link each replaced memory to its replacement; each change in its history."""
        actor = Actor(name="pipeline", type="daemon", agent_id=agent_id)
        for old_id, new_id in replacements:
            tx.update_columns(old_id, {"superseded_by": new_id}, stamp)
            tx.record(
                old_id, "updated", actor, stamp, reason=f"superseded by {new_id}",
                metadata={"superseded_by": new_id},
            )

    def _persist_graph(self, work: _Work, written: list[tuple[str, str]], now: datetime) -> None:
        """Phase 3: the graph, in its own transaction; failures never revert the facts."""
        if self.flags.shadow or not self.config.graph.enabled or not work.extraction.entities:
            return
        try:
            with self.graph.writing() as ops:
                persist_graph(
                    ops, work.extraction.entities, source=work.source, written=written,
                    now=format_ts(now),
                )
        except Exception:
            log.warning("graph persistence failed for memory %s; facts kept", work.source.id,
                        exc_info=True)

    def _mark(self, tx: PipelineTx, job: jobs.Job, status: str) -> None:
        if job.memory_id:
            model = self.llm_model if status == "completed" else None
            tx.set_extraction_status(job.memory_id, status, model)


def _older(old: Memory, new: Memory) -> bool:
    """Whether `old` was stated before `new` (its event time, else when it was written)."""
    return (old.event_at or old.created_at, old.created_at) < (new.event_at or new.created_at, new.created_at)
