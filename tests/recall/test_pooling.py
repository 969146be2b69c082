"""Whole sources: a source's memories are ranked as one document; crowding spreads results."""

from __future__ import annotations

from signet.app import SignetApp
from signet.recall import pooling
from signet.types import RecallQuery

# A session stored as three windows: each names part of the request, none names all of it.
SESSION = (
    "User: my Ford Mustang needs a new air filter",
    "User: I always redeem loyalty coupons at Target",
    "User: the store discount applies to car parts too",
)
# A session whose one window matches two request words, each twice.
RANT = ("User: Mustang coupons, more Mustang coupons!", "User: anyway, see you tomorrow")


def _sources(app: SignetApp, text: str, limit: int = 10) -> list[str | None]:
    hits = app.recall(RecallQuery(text, limit=limit, mode="keyword", touch=False)).hits
    return [h.memory.source_id for h in hits]


def _fill(app: SignetApp) -> None:
    app.recaller = app.recaller.respec(context_weight=0.0)  # whole sources alone
    for text in SESSION:
        app.remember(text, source_id="session-cars", event_at="2024-01-01")
    for text in RANT:
        app.remember(text, source_id="session-rant", event_at="2024-01-02")
    for n in range(6):
        app.remember(f"User: unrelated note number {n} about gardening", source_id=f"s{n}")


def test_whole_source_outranks_a_single_strong_window(lexical_app: SignetApp) -> None:
    _fill(lexical_app)
    request = "Mustang filter coupons discount"
    assert _sources(lexical_app, request)[0] == "session-cars"
    lexical_app.recaller = lexical_app.recaller.respec(source_channel=False)
    assert _sources(lexical_app, request)[0] == "session-rant"


def test_source_evidence_is_carried_by_its_best_member(lexical_app: SignetApp) -> None:
    _fill(lexical_app)
    hits = lexical_app.recall(
        RecallQuery("loyalty coupons discount", limit=3, mode="keyword", touch=False)
    ).hits
    top = hits[0]
    assert top.memory.source_id == "session-cars"
    assert top.evidence.source is not None and top.evidence.lexical is None
    assert "loyalty coupons" in top.memory.content  # the window the lexical ranks put first


def test_source_index_follows_forget_and_modify(lexical_app: SignetApp) -> None:
    _fill(lexical_app)
    request = "air filter"
    first = lexical_app.recall(RecallQuery(request, limit=1, mode="keyword", touch=False)).hits[0]
    assert first.memory.source_id == "session-cars"
    lexical_app.forget(first.memory.id, reason="test")
    # The forgotten window's words leave the source's text, so nothing matches them now.
    assert _sources(lexical_app, request) == []
    target = lexical_app.recall(RecallQuery("Target", limit=1, mode="keyword", touch=False))
    lexical_app.modify(target.hits[0].memory.id, {"content": "User: I shop at Costco now"}, reason="test")
    assert _sources(lexical_app, "Target") == []
    assert _sources(lexical_app, "Costco")[0] == "session-cars"


def test_crowding_lets_other_sources_in(lexical_app: SignetApp) -> None:
    lexical_app.recaller = lexical_app.recaller.respec(context_weight=0.0, source_channel=False)
    for n in range(3):
        lexical_app.remember(f"User: coupons for window {n}", source_id="long-session")
    lexical_app.remember("User: coupons for another slightly longer window", source_id="other")
    for n in range(6):
        lexical_app.remember(f"User: unrelated note number {n} about gardening", source_id=f"s{n}")
    lexical_app.recaller = lexical_app.recaller.respec(crowding=1.0)
    assert _sources(lexical_app, "coupons", limit=2) == ["long-session", "long-session"]
    lexical_app.recaller = lexical_app.recaller.respec(crowding=pooling.CROWDING)
    assert _sources(lexical_app, "coupons", limit=2) == ["long-session", "other"]


def test_memories_without_a_source_are_untouched() -> None:
    ranking = [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    assert pooling.crowded(ranking, {}) == ranking
