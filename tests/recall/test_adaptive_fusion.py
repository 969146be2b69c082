"""The query-adaptive fusion's evidence (recall/fuse.py): the lexical channel's lead fades the
dense channels out, the dense channels' own lead keeps (or raises) their weight, long prompts
are exempt, and a missing lexical channel changes nothing; and through the real recall, the
default keeps a clear lexical winner first where the fixed weights lose it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from signet.app import SignetApp
from signet.recall.fuse import adapted, dense_share, lead, rrf
from signet.types import RecallQuery, RecallResponse


def test_the_lead_is_the_best_matchs_share_ahead_of_the_second() -> None:
    assert lead([("a", 10.0), ("b", 6.0)]) == 0.4
    assert lead([("a", 10.0)]) == 1.0
    assert lead([]) == 0.0


def test_a_clear_lexical_winner_is_not_pulled_down_by_the_dense_channel() -> None:
    raw = {"lexical": [("answer", 12.0), ("near", 7.0)], "semantic": [("near", 0.6)]}
    rankings = {
        "lexical": [("answer", 12.0), ("near", 7.0)],
        "semantic": [("near", 0.6), ("x", 0.5), ("y", 0.5), ("z", 0.5), ("w", 0.5),
                     ("answer", 0.4)],
    }
    fixed = rrf(rankings, 60, {"semantic": 0.3})
    assert max(fixed, key=fixed.__getitem__) == "near"  # the fixed weights lose it
    share = dense_share(raw, query_words=8, lexical_lead=0.2, max_words=80)
    assert share == 0.0
    fused = rrf(rankings, 60, adapted({"semantic": 0.3}, share))
    assert max(fused, key=fused.__getitem__) == "answer"


def test_a_close_race_keeps_the_dense_channels_and_long_prompts_are_exempt() -> None:
    close = {"lexical": [("a", 10.0), ("b", 9.5)]}
    assert dense_share(close, query_words=8, lexical_lead=0.2, max_words=80) == 0.75
    far = {"source": [("a", 10.0), ("b", 1.0)]}
    assert dense_share(far, query_words=8, lexical_lead=0.2, max_words=80) == 0.0
    assert dense_share(far, query_words=200, lexical_lead=0.2, max_words=80) == 1.0
    assert dense_share(far, query_words=8, lexical_lead=0.0, max_words=80) == 1.0
    assert dense_share({"semantic": [("a", 0.9)]}, query_words=8, lexical_lead=0.2,
                       max_words=80) == 1.0
    assert adapted({"semantic": 0.3}, 0.5) == {"semantic": 0.15, "source_semantic": 0.5}


def test_a_sure_dense_channel_keeps_its_weight_against_a_chance_lexical_lead() -> None:
    # A paraphrase: the lexical channel leads on a chance word, the dense one is sure.
    raw = {"lexical": [("chance", 8.0), ("other", 4.0)],
           "semantic": [("answer", 0.7), ("near", 0.49)]}
    rankings = {"lexical": raw["lexical"], "semantic": raw["semantic"]}
    faded = dense_share(raw, query_words=8, lexical_lead=0.2, max_words=80)
    assert faded == 0.0  # the lexical lead alone would leave the dense channels out
    share = dense_share(raw, query_words=8, lexical_lead=0.2, max_words=80, dense_lead=0.15)
    assert share == 2.0  # its lead of 0.3 is twice the dense lead: twice its weight (the cap)
    fused = rrf(rankings, 60, adapted({"semantic": 1.0}, share))
    assert max(fused, key=fused.__getitem__) == "answer"
    unsure = {**raw, "semantic": [("answer", 0.8), ("near", 0.76)]}  # a lead of 0.05
    assert dense_share(unsure, query_words=8, lexical_lead=0.2, max_words=80,
                       dense_lead=0.1) == pytest.approx(0.5)


# Through the real recall: ten memories echo the question's common words (the hash embedder
# ranks one of them first); one holds its rare word (BM25 ranks it first by a wide lead).
ANSWER = "Caroline adopted Biscuit, a beagle puppy, in May."
ECHOES = (
    "When did Caroline adopt them? When did she?",
    "When did Caroline adopt a plan for the garden?",
    "Caroline wondered when to adopt a routine.",
    "When Caroline adopted the new schedule, she felt calm.",
    "Did Caroline adopt the idea? When, she did not say.",
    "When did Carol adopt the rules, and did Caroline?",
    "Caroline did adopt it when asked.",
    "When did the club adopt Caroline's proposal?",
    "Did Caroline say when the board would adopt it?",
    "When did Caroline and Dave adopt that habit?",
)
QUESTION = "When did Caroline adopt Biscuit?"


def _top(recall: Callable[[RecallQuery], RecallResponse], query: str, mode: str) -> str:
    return recall(RecallQuery(query, mode=mode, limit=5)).hits[0].memory.content  # type: ignore[arg-type]


def test_the_default_keeps_a_clear_lexical_winner_first_end_to_end(app: SignetApp) -> None:
    for text in (ANSWER, *ECHOES):
        app.remember(text)
    app.run_pipeline_until_idle(only=["embed"])
    fixed = app.recaller.respec(lexical_lead=0.0)
    for mode in ("hybrid", "full"):
        assert _top(app.recall, QUESTION, mode) == ANSWER
        # The fixed weights let the dense channel's favourite echo pass it.
        assert _top(fixed.recall, QUESTION, mode) != ANSWER
