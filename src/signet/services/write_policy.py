"""What the memory service decides about new memories: whether the pipeline runs and whether a
memory is extracted (not a pipeline fact, which would loop, nor a skill's memory), and
`embed_each`, which embeds a batch's distinct texts in one call before any transaction, stored or
not: vectors are shared by every scope, so skipping stored ones would let a write's answer and
time depend on other scopes. A provider fault leaves the batch to the embed worker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from signet.config import Config, PipelineConfig
from signet.errors import ProviderError
from signet.pipeline.rule_extractor import extraction_mode
from signet.providers.embedder import Embedder
from signet.types import NewMemory

__all__ = ["embed_each", "extracts", "pipeline_brief", "pipeline_on"]

log = logging.getLogger(__name__)


def pipeline_on(config: PipelineConfig) -> bool:
    return config.running


def extracts(config: PipelineConfig, memory: NewMemory) -> bool:
    return pipeline_on(config) and memory.source_type not in ("pipeline", "skill")


def pipeline_brief(config: Config) -> dict[str, Any]:
    pipeline = config.pipeline
    return {"enabled": pipeline.enabled, "mutationsFrozen": pipeline.mutations_frozen,
            "extraction": extraction_mode(config.llm.provider != "none",
                                          pipeline.min_fact_confidence_for_write)}


def embed_each(embedder: Embedder, texts: Sequence[str], hashes: Sequence[str]) -> list[np.ndarray | None]:
    """A vector for each text, each distinct content embedded once (all None when the provider
    fails)."""
    unique: dict[str, int] = {}
    for i, content_hash in enumerate(hashes):
        unique.setdefault(content_hash, i)
    if not unique:
        return [None] * len(texts)
    try:
        matrix = embedder.embed([texts[i] for i in unique.values()])
    except ProviderError as exc:
        log.warning("batch embedding failed, deferring to the embed worker: %s", exc)
        return [None] * len(texts)
    row_of = {content_hash: row for row, content_hash in enumerate(unique)}
    return [matrix[row_of[content_hash]] for content_hash in hashes]
