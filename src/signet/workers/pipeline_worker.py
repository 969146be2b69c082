"""The skeleton the pipeline's per-memory workers (extract, hints) share: one job of the worker's
type per tick, while the pipeline runs (`PipelineConfig.running`), worked on the live memory the
job names, with the LLM when one is configured. A worker adds only its `_run`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import datetime

from signet.config import PipelineConfig
from signet.pipeline.llm_json import CompletingLLM
from signet.store import jobs
from signet.store.pipeline import PipelineStore, PipelineTx
from signet.types import Memory
from signet.workers.leasing import JobRunner, on_live_memory

__all__ = ["PipelineWorker"]


class PipelineWorker(ABC):
    name: str  # the job type it runs, set by each worker class

    def __init__(
        self,
        store: PipelineStore,
        config: PipelineConfig,
        llm: CompletingLLM | None,
        *,
        retry_base_ms: int,
        on_dead: Callable[[PipelineTx, jobs.Job], None] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.llm = llm
        self.jobs = JobRunner(
            store, self.name, on_live_memory(store, self._run), retry_base_ms=retry_base_ms,
            on_dead=on_dead,
        )

    def tick(self, now: datetime) -> bool:
        return self.config.running and self.jobs.tick(now)

    @abstractmethod
    def _run(self, job: jobs.Job, memory: Memory, now: datetime) -> None:
        """The job's work on its memory; it completes the job in the transaction it writes in."""
