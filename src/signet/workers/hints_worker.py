"""The hints worker: three to five questions a user might later ask when a memory would help, stored
in `memories.hints` for recall's hint channel. With an LLM, one call outside any transaction;
without one nothing is stored unless `VocabularyHints` is given (opt-in: it costs precision on
MemAware, docs/pipeline.md). In shadow mode the hints stay in the job's result.
"""

from __future__ import annotations

import logging
from datetime import datetime

import numpy as np

from signet.config import PipelineConfig
from signet.pipeline.hints import generate_hints
from signet.pipeline.llm_json import CompletingLLM
from signet.pipeline.vocab_hints import VocabularyHints
from signet.providers.embedder import Embedder
from signet.store import jobs
from signet.store.pipeline import PipelineStore
from signet.types import Memory
from signet.workers.leasing import complete_job
from signet.workers.pipeline_worker import PipelineWorker

log = logging.getLogger(__name__)

VOCABULARY_TERMS = 8


class HintsWorker(PipelineWorker):
    name = "hints"

    def __init__(
        self,
        store: PipelineStore,
        config: PipelineConfig,
        llm: CompletingLLM | None,
        embedder: Embedder | None,
        *,
        vocabulary: VocabularyHints | None = None,
        vocabulary_terms: int = VOCABULARY_TERMS,
        retry_base_ms: int = 1_000,
    ) -> None:
        super().__init__(store, config, llm, retry_base_ms=retry_base_ms)
        self.embedder = embedder
        self.vocabulary = vocabulary
        self.vocabulary_terms = vocabulary_terms

    def _run(self, job: jobs.Job, memory: Memory, now: datetime) -> None:
        hints, method = self._hints(memory)
        shadow = self.config.shadow_mode
        with self.store.write() as tx:
            current = tx.get_memory(memory.id)
            # New content while we thought: its own hints job (enqueued by the change) wins.
            fresh = current is not None and current.content_hash == memory.content_hash
            if hints and fresh and not shadow:
                tx.set_hints(memory.id, " ".join(hints))
            complete_job(tx, job, now, {
                "hints": hints, "method": method, "stored": bool(hints and fresh and not shadow),
            })

    def _hints(self, memory: Memory) -> tuple[list[str], str]:
        """Phase 1, no transaction: the LLM call or the vocabulary lookup."""
        limit = self.config.hints.max
        if self.llm is not None:
            return generate_hints(self.llm, memory.content, self.config.hints.min, limit), "llm"
        if self.vocabulary is None or self.embedder is None:
            return [], "none"  # no model to imagine questions with (see the module docstring)
        vector = self._vector(memory)
        return self.vocabulary.terms(vector, memory.content, self.vocabulary_terms), "vocabulary"

    def _vector(self, memory: Memory) -> np.ndarray:
        assert self.embedder is not None
        stored = self.store.vector_for(memory.content_hash or "", self.embedder.model)
        if stored is not None:
            return stored
        return self.embedder.embed([memory.content])[0]
