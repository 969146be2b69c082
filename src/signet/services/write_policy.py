"""What the memory service (services/memory.py, on either store) decides about new memories,
in functions of their own:

- `pipeline_on` / `extracts`: whether new memories go through the pipeline (enabled and not
  frozen), and whether this one is extracted: a fact the pipeline wrote is not extracted again
  (that would loop on itself), nor a skill's memory (its own SKILL.md: instructions, not facts);
- `pipeline_brief`: the pipeline in `status` (enabled, frozen, how facts are extracted);
- `embed_missing`: a batch's texts embedded in one call (before any write transaction), each
  distinct content once and only when it has no current vector; a provider fault leaves the
  batch to the embed worker rather than failing the write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from signet.config import Config, PipelineConfig
from signet.errors import ProviderError
from signet.pipeline.rule_extractor import extraction_mode
from signet.providers.embedder import Embedder
from signet.types import NewMemory

__all__ = ["embed_missing", "extracts", "pipeline_brief", "pipeline_on"]

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


def embed_missing(
    embedder: Embedder, texts: Sequence[str], hashes: Sequence[str],
    has_vector: Callable[[str], bool],
) -> list[np.ndarray | None]:
    """A vector for each text whose hash has none yet (None for the others, or for all when
    the provider fails)."""
    unique: dict[str, int] = {}
    for i, content_hash in enumerate(hashes):
        if content_hash not in unique and not has_vector(content_hash):
            unique[content_hash] = i
    out: list[np.ndarray | None] = [None] * len(texts)
    if not unique:
        return out
    try:
        matrix = embedder.embed([texts[i] for i in unique.values()])
    except ProviderError as exc:
        log.warning("batch embedding failed, deferring to the embed worker: %s", exc)
        return out
    for row, i in enumerate(unique.values()):
        out[i] = matrix[row]
    return out
