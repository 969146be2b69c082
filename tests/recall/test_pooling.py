"""Source pooling: a source's memories count together; crowding spreads results over sources."""

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
# A single memory that matches one word strongly, twice.
DISTRACTOR = "User: coupons coupons everywhere, I hate coupons"


def _sources(app: SignetApp, text: str, limit: int = 10) -> list[str | None]:
    hits = app.recall(RecallQuery(text, limit=limit, mode="keyword", touch=False)).hits
    return [h.memory.source_id for h in hits]


def _fill(app: SignetApp) -> None:
    app.recaller.context_weight = 0.0  # pooling alone
    for text in SESSION:
        app.remember(text, source_id="session-cars", event_at="2024-01-01")
    app.remember(DISTRACTOR, source_id="session-rant", event_at="2024-01-02")
    for n in range(6):
        app.remember(f"User: unrelated note number {n} about gardening", source_id=f"s{n}")


def test_pooled_source_outranks_a_single_strong_match(lexical_app: SignetApp) -> None:
    _fill(lexical_app)
    request = "Mustang air filter: where can I use my loyalty coupons discount?"
    assert _sources(lexical_app, request)[0] == "session-cars"
    lexical_app.recaller.pool_decay = 0.0
    lexical_app.recaller.crowding = 1.0
    assert _sources(lexical_app, "coupons discount")[0] == "session-rant"


def test_crowding_lets_other_sources_in(lexical_app: SignetApp) -> None:
    lexical_app.recaller.context_weight = 0.0
    lexical_app.recaller.pool_decay = 0.0
    for n in range(3):
        lexical_app.remember(f"User: coupons for window {n}", source_id="long-session")
    lexical_app.remember("User: coupons for another slightly longer window", source_id="other")
    for n in range(6):
        lexical_app.remember(f"User: unrelated note number {n} about gardening", source_id=f"s{n}")
    lexical_app.recaller.crowding = 1.0
    assert _sources(lexical_app, "coupons", limit=2) == ["long-session", "long-session"]
    lexical_app.recaller.crowding = pooling.CROWDING
    assert _sources(lexical_app, "coupons", limit=2) == ["long-session", "other"]


def test_memories_without_a_source_are_untouched() -> None:
    ranking = [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    assert pooling.pooled(ranking, {}) == ranking
    assert pooling.crowded(ranking, {}) == ranking


def test_pooled_sum_is_decayed_by_position() -> None:
    ranking = [("a", 4.0), ("b", 2.0), ("c", 1.0), ("d", 3.5)]
    rescored = dict(pooling.pooled(ranking, {"a": "s", "b": "s", "c": "s"}, decay=0.5))
    assert rescored == {"a": 4.0 + 1.0 + 0.25, "b": 2.0, "c": 1.0, "d": 3.5}
