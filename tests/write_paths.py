"""Configs for tests that read a memory's vector right after writing it.

The default write path is deferred (`embedding.write_path`): remember returns before the
vector exists and the embed worker adds it. Tests about recall, maintenance or retention that
need the vector at once say so with `inline(config)`; the deferred path itself is tested in
tests/services/test_deferred_embedding.py and tests/daemon/test_deferred_daemon.py.
"""

from __future__ import annotations

import dataclasses

from signet.config import Config


def inline(config: Config) -> Config:
    """`config` with `embedding.write_path: inline` (a local embedder embeds before the write)."""
    return config.replace(embedding=dataclasses.replace(config.embedding, write_path="inline"))
