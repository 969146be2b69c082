"""An in-process model's first call (its load) is waited for in full; later calls get the budget.

Without this, a one-shot `signet recall` (and a daemon's first recall) lost its semantic channel
to the bundled model's load, which takes seconds on a busy machine.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.errors import ProviderTimeout
from signet.providers.guard import ProviderGuard
from signet.providers.local_embedder import LocalEmbedder
from signet.types import RecallQuery
from write_paths import inline


def _slow(value: str, seconds: float) -> Future[str]:
    future: Future[str] = Future()
    threading.Timer(seconds, future.set_result, args=(value,)).start()
    return future


def _guard(unbounded: bool) -> ProviderGuard:
    return ProviderGuard("query embedding", budget_s=0.05, failures=3, cooldown_s=1.0,
                         unbounded_until_ready=unbounded)


def test_calls_before_the_first_success_wait_past_the_budget_then_the_budget_applies() -> None:
    guard = _guard(unbounded=True)
    assert guard.wait(lambda: _slow("loaded", 0.3)) == "loaded"
    with pytest.raises(ProviderTimeout):
        guard.wait(lambda: _slow("late", 0.3))


def test_a_remote_provider_gets_the_budget_from_its_first_call() -> None:
    started = time.monotonic()
    with pytest.raises(ProviderTimeout):
        _guard(unbounded=False).wait(lambda: _slow("hung", 0.5))
    assert time.monotonic() - started < 0.45


def test_the_first_recall_with_the_bundled_model_keeps_its_semantic_channel(
    tmp_path: Path,
) -> None:
    config = inline(Config.default(tmp_path / "ws"))
    # A budget the model's load cannot meet: only the first call's exemption lets it through.
    config = config.replace(search=dataclasses.replace(config.search, query_embed_timeout_ms=1))
    with SignetApp.open(config, embedder=LocalEmbedder(), llm=None) as app:
        made = app.remember("The quarterly invoices are archived in the blue cabinet")
        first = app.recall(RecallQuery("where do the invoices get filed", mode="vector"))
        assert "semantic" not in first.degraded
        assert [h.memory.id for h in first.hits][:1] == [made.id]
        assert app.recaller.guard is not None and app.recaller.guard.snapshot()["state"] == "closed"
