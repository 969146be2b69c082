"""The background workers, in the order the daemon ticks them and
`SignetApp.run_pipeline_until_idle` runs them, built from the parts the composition root made.
Each depends on the services it writes through, never on the app. Top-level rather than in
services/, as maintenance and skills import services/ themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from signet import maintenance, skills
from signet.config import Config
from signet.connectors.folder import ConnectorWorker, FolderConnectors
from signet.documents.fetch import FetchPolicy
from signet.documents.worker import ChunkWriter, DocumentWorker
from signet.providers.embedder import Embedder
from signet.providers.llm import LLM
from signet.recall.hybrid import Recaller
from signet.services.memory import MemoryService
from signet.services.operations import Operations
from signet.sessions.service import Sessions
from signet.store.backend import CoreStore
from signet.store.document_store import DocumentStore
from signet.store.graph_store import GraphStore
from signet.store.pipeline import PipelineStore
from signet.workers.embed_worker import EmbedWorker
from signet.workers.extract_worker import ExtractWorker
from signet.workers.hints_worker import HintsWorker
from signet.workers.loop import ReaperWorker, Worker
from signet.workers.retention_worker import RetentionWorker
from signet.workers.scheduled import ScheduledWorker
from signet.workers.summary_worker import PreparedWrites, SummaryWorker, SummaryWrites

__all__ = ["Parts", "build_workers"]


@dataclass(frozen=True, slots=True)
class Parts:
    """What the workers are built from (the root's own objects)."""

    config: Config
    core: CoreStore
    pipeline: PipelineStore
    graph: GraphStore
    recaller: Recaller
    memory: MemoryService
    sessions: Sessions
    connectors: FolderConnectors
    embedder: Embedder | None
    llm: LLM | None
    operations: Operations
    # The embed worker's own embedder (the model in a child process); None: `embedder`.
    worker_embedder: Embedder | None = None


def build_workers(parts: Parts) -> list[Worker]:
    config, memory, llm = parts.config, parts.memory, parts.llm
    cfg = config.pipeline
    model = parts.embedder.model if parts.embedder else None
    return [
        ExtractWorker(
            parts.pipeline, parts.recaller, memory, cfg, llm,
            llm_model=llm.model if llm else None, embedder_model=model, graph=parts.graph,
        ),
        HintsWorker(parts.pipeline, cfg, llm, parts.embedder),
        EmbedWorker(
            parts.core, parts.worker_embedder or parts.embedder, frozen=cfg.mutations_frozen,
            batch_size=config.embedding.batch_size,
        ),
        document_worker(config, parts.connectors.docs, memory),
        ConnectorWorker(
            parts.connectors, config.documents.connector_sync_interval_ms,
            frozen=cfg.mutations_frozen,
        ),
        ReaperWorker(parts.core, cfg.lease_timeout_ms),
        skills_worker(memory, config),
        *operations_workers(parts.operations),
        *session_workers(parts.sessions, config, PreparedWrites(memory), llm),
    ]


def skills_worker(memory: MemoryService, config: Config) -> Worker:
    """The skills reconciler (signet/skills.py)."""
    return ScheduledWorker(
        "skills", lambda now: skills.changed(skills.reconcile(memory, now)),
        interval_ms=config.skills.reconcile_interval_ms, enabled=config.skills.enabled,
    )


def operations_workers(operations: Operations) -> list[Worker]:
    """The operator's workers: the retention sweep (one daemon at a time on a shared store)
    and the scheduled maintenance run."""
    config = operations.config
    cfg = config.pipeline

    def maintain(now: datetime) -> bool:
        execute = cfg.autonomous.maintenance_mode == "execute"
        report = maintenance.run_maintenance(operations, execute=execute, now=now,
                                             trigger="scheduled")
        return bool(report["actions"])

    return [
        RetentionWorker(operations.ops, config.retention, frozen=cfg.mutations_frozen),
        ScheduledWorker("maintenance", maintain, interval_ms=cfg.autonomous.interval_ms,
                        enabled=cfg.autonomous.enabled),
    ]


def session_workers(
    sessions: Sessions, config: Config, writes: SummaryWrites, llm: LLM | None
) -> list[Worker]:
    """The lineage's workers: summaries (the summary memory written by `writes`), the
    idle-session sweep, MEMORY.md synthesis."""
    cfg = config.pipeline
    return [
        SummaryWorker(sessions.store, config.workspace, config.sessions, cfg, writes, llm),
        # Harnesses that skip session-end: idle sessions are closed and summarised.
        ScheduledWorker(
            "session-timeout", sessions.close_idle, interval_ms=60_000,
            enabled=cfg.enabled and not cfg.mutations_frozen,
        ),
        # The global head (MEMORY.md), rendered again after an idle gap.
        ScheduledWorker(
            "synthesis", sessions.head.run_if_due, interval_ms=60_000,
            enabled=not cfg.mutations_frozen,
        ),
    ]


def document_worker(config: Config, docs: DocumentStore, writer: ChunkWriter) -> DocumentWorker:
    """The document worker over the backend's DocumentStore."""
    dcfg, cfg = config.documents, config.pipeline
    policy = FetchPolicy(
        enabled=dcfg.url_fetch_enabled, max_bytes=dcfg.fetch_max_bytes,
        timeout_s=dcfg.fetch_timeout_ms / 1000, max_redirects=dcfg.fetch_max_redirects,
        allowed_hosts=dcfg.fetch_allowed_hosts,
    )
    return DocumentWorker(
        docs, writer, chunk_size=cfg.document_chunk_size,
        chunk_overlap=cfg.document_chunk_overlap, fetch_policy=policy,
        max_file_bytes=dcfg.max_file_bytes,
        max_chunk_chars=config.memory.max_content_chars, frozen=cfg.mutations_frozen,
    )
