"""The bundled model in child processes (providers/embed_process.py): the same vectors as in
the caller's own process, split between the children in the caller's order; a child that
stops answering is killed and its call fails with ProviderError, and the next call starts a
new one."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from signet.errors import ProviderError
from signet.providers.embed_process import ProcessEmbedder
from signet.providers.local_embedder import MODEL, LocalEmbedder

TEXTS = [f"note {i}: the {word} is kept in drawer {i % 7}" for i, word in
         enumerate(["invoice", "bicycle pump", "passport", "garden hose", "tax form"] * 8)]


def test_the_children_return_the_callers_vectors_in_order_and_survive_a_kill() -> None:
    here = LocalEmbedder(model=MODEL, batch_size=8)
    expected = here.embed(TEXTS)
    children = ProcessEmbedder(model=MODEL, dimensions=384, batch_size=8, processes=2)
    try:
        got = children.embed(TEXTS)
        assert got.shape == expected.shape and got.dtype == np.float32
        # every row its own text's (cosine ~1), in the caller's order
        assert float(np.min(np.sum(got * expected, axis=1))) > 0.9999
        pids = children.pids
        assert len(pids) == 2 and os.getpid() not in pids

        children.timeout_s = 1.0  # stopped children never answer: the watchdog kills them
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        with pytest.raises(ProviderError, match="embedding process stopped"):
            children.embed(TEXTS)
        assert children.pids == []
        children.timeout_s = 300.0
        again = children.embed(TEXTS[:3])  # a new child for the next call
        assert np.allclose(again, got[:3], atol=1e-5)
        assert children.pids and not set(children.pids) & set(pids)
        assert children.embed([]).shape == (0, 384)
    finally:
        children.close()
    assert children.pids == []
    with pytest.raises(ProviderError, match="closed"):
        children.embed(TEXTS[:1])
