"""Confidence with the bundled model: noise about nothing stored falls under the agent floor,
a true answer clears it, and confidence orders a clearly better match above a weaker one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.recall.confidence import AGENT_MIN_CONFIDENCE
from signet.types import RecallQuery

NOTES = (
    "The billing service is written in Go",
    "My cat is named Whiskers",
    "The weekly standup moved to Thursday afternoon",
    "My sister's birthday is on the 4th of March",
    "We chose PostgreSQL for the orders database",
    "The deployment pipeline runs on GitHub Actions",
    "Our servers run Ubuntu 22.04 on AWS",
)


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignetApp]:
    path: Path = tmp_path_factory.mktemp("confidence") / "ws"
    with SignetApp.open(Config.default(path)) as app:  # the bundled local model
        for text in NOTES:
            app.remember(text)
        app.run_pipeline_until_idle(only=["embed"])  # the deferred vectors, in one batch
        yield app


def test_a_query_about_nothing_stored_returns_only_noise(real_app: SignetApp) -> None:
    text = "kubernetes cluster autoscaling"
    everything = real_app.recall(RecallQuery(text, mode="hybrid")).hits
    assert everything  # meaning finds the infrastructure notes, near but not about it
    floored = real_app.recall(RecallQuery(text, mode="hybrid", min_confidence=AGENT_MIN_CONFIDENCE))
    assert floored.hits == ()


def test_a_true_answer_clears_the_floor(real_app: SignetApp) -> None:
    for text, expected in (("what is my cat called", NOTES[1]),
                           ("which language is the billing service written in", NOTES[0])):
        hits = real_app.recall(
            RecallQuery(text, mode="hybrid", min_confidence=AGENT_MIN_CONFIDENCE)
        ).hits
        assert hits and hits[0].memory.content == expected
        assert all(0.0 <= h.confidence <= 1.0 for h in hits)


def test_a_candidates_stems_and_date_anchor_are_computed_once_and_cannot_be_changed() -> None:
    # Recall scores the same candidates query after query: their stems and date anchor are
    # cached by text, and the cached stems are frozen so no caller can alter the next answer.
    from signet.recall.confidence import stems
    from signet.recall.dampen import is_date_anchored

    text = "Melanie painted lakes at sunrise on 2023-05-07 with her owners"
    first = stems(text)
    hits = stems.cache_info().hits
    assert stems(text) is first and stems.cache_info().hits == hits + 1
    assert {"paint", "owner"} <= first and isinstance(first, frozenset)
    anchored = is_date_anchored.cache_info().hits
    assert is_date_anchored(text) and is_date_anchored(text)
    assert is_date_anchored.cache_info().hits == anchored + 1
