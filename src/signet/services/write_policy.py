"""What the memory service (services/memory.py, on either store) decides about new memories,
in functions of their own:

- `pipeline_on` / `extracts`: whether new memories go through the pipeline (enabled and not
  frozen), and whether this one is extracted: a fact the pipeline wrote is not extracted again
  (that would loop on itself), nor a skill's memory (its own SKILL.md: instructions, not facts);
- `pipeline_brief`: the pipeline in `status` (enabled, frozen, how facts are extracted);
- `embed_each`: a batch's texts embedded in one call (before any write transaction), each
  distinct content once, whether or not a vector of it is stored already: vectors are shared
  by every scope, so skipping the stored ones would make a write's answer (and its time)
  depend on what other scopes hold; a provider fault leaves the batch to the embed worker
  rather than failing the write.
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
    return config.enabled and not config.mutations_frozen


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
