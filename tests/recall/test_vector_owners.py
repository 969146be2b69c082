"""The memories behind the semantic channel's vectors: the quantized index finds them by the
content hashes its rescoring read, the exact index from the table; the same memories, in the
same order, when one text lives in several scopes and a copy of it was forgotten."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.store import embeddings as emb_sql
from write_paths import inline

SHARED = "the kayak trip down the fjord at dawn"


def _open(config: Config, kind: str) -> SignetApp:
    chosen = dataclasses.replace(config, embedding=dataclasses.replace(config.embedding, index=kind))
    return SignetApp.open(chosen, embedder=HashEmbedder(64))


def _nearest(app: SignetApp) -> list[tuple[str, float]]:
    """The semantic channel as the index gives it, before any fusion sorts it."""
    assert app.vectors is not None
    query = HashEmbedder(64).embed([SHARED])[0]
    return [(m, round(s, 5)) for m, s in app.vectors.search(app.store.reader(), query, 40)]


def test_a_shared_texts_memories_come_back_alike_from_either_index(tmp_path: Path) -> None:
    config = inline(Config.default(tmp_path / "ws"))
    with _open(config, "quantized") as writer:
        writer.remember_many([{"content": f"note {i} about a garden and a piano"} for i in range(50)])
        owners = [writer.remember(SHARED, agent_id=agent, project=project).id
                  for agent, project in (("zed", None), ("amy", "boat"), ("amy", None),
                                         ("bob", "boat"))]
        writer.forget(owners[3], reason="test")
        quantized, exact = _open(config, "quantized"), _open(config, "exact")
        try:
            found = _nearest(quantized)
            assert found == _nearest(exact)
            # The shared vector comes first, its live memories in the table's order.
            reader = quantized.store.reader()
            table = emb_sql.memory_ids_for(reader, emb_sql.current_ids(reader, "hash-64", 64).tolist())
            by_table = next(ids for ids in table.values() if owners[0] in ids)
            assert [m for m, _ in found[:3]] == by_table
            assert sorted(by_table) == sorted(owners[:3])
        finally:
            quantized.close()
            exact.close()
