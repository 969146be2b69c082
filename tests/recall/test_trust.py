"""Recall people can trust: a search is not an access, boosts never beat a clearly better match,
evidence means what docs/api.md says, and confidence filters noise."""

from __future__ import annotations

from signet.app import SignetApp
from signet.store import memories as mem_sql
from signet.types import Actor, RecallQuery, utc_now


def _accessed(app: SignetApp, memory_id: str, times: int) -> None:
    """Record `times` accesses (what positive feedback or a recall asked to touch records)."""
    with app.store.write_tx() as conn:
        for _ in range(times):
            mem_sql.touch(conn, [memory_id], utc_now())


def test_being_returned_by_a_search_is_not_an_access(lexical_app: SignetApp) -> None:
    memory_id = lexical_app.remember("The billing service is written in Go").id
    for _ in range(3):
        assert lexical_app.recall(RecallQuery("billing service", mode="keyword")).hits
    assert lexical_app.get(memory_id).access_count == 0


def test_rehearsal_cannot_lift_a_memory_over_a_clearly_better_match(
    sqlite_lexical_app: SignetApp,
) -> None:
    lexical_app = sqlite_lexical_app  # _accessed writes through the SQLite store
    best = lexical_app.remember("svc-5 owner is Dana Whitfield").id
    coffee = lexical_app.remember("The owner of the coffee machine rota is Sam").id
    retired = lexical_app.remember("svc-9 was retired last spring").id
    _accessed(lexical_app, coffee, 27)
    _accessed(lexical_app, retired, 19)
    hits = lexical_app.recall(RecallQuery("svc-5 owner", mode="keyword")).hits
    assert hits[0].memory.id == best
    boosted = {h.memory.id: h.adjustments for h in hits}
    assert "rehearsal" in boosted[coffee] and "rehearsal" in boosted[retired]
    assert "rehearsal" not in boosted[best]


def test_rehearsal_still_orders_equal_matches(sqlite_lexical_app: SignetApp) -> None:
    lexical_app = sqlite_lexical_app  # _accessed writes through the SQLite store
    lexical_app.remember("deploy notes for the payments api")
    lexical_app.remember("deploy notes for the search api")
    before = [h.memory.id for h in lexical_app.recall(RecallQuery("deploy notes", mode="keyword")).hits]
    second = before[1]
    _accessed(lexical_app, second, 10)
    hits = lexical_app.recall(RecallQuery("deploy notes", mode="keyword")).hits
    assert hits[0].memory.id == second and "rehearsal" in hits[0].adjustments


def test_a_date_boost_cannot_win_over_relevance(lexical_app: SignetApp) -> None:
    tabs = lexical_app.remember("Alice likes tabs for indentation").id
    rust = lexical_app.remember("Alice has written Rust since 2025").id
    for text in ("Alice went to Lisbon in May", "Alice owns a blue bike", "Alice plays chess"):
        lexical_app.remember(text)
    hits = lexical_app.recall(RecallQuery("what indentation does alice like?", mode="keyword")).hits
    assert hits[0].memory.id == tabs
    assert "resolution" in next(h.adjustments for h in hits if h.memory.id == rust)


def _in_unit_range(value: object) -> bool:
    return value is None or (isinstance(value, float) and 0.0 <= value <= 1.0)


def test_every_evidence_field_is_in_zero_one(app: SignetApp) -> None:
    chat = Actor(session_id="chat-1")
    at = "2023-05-08T13:56:00"
    app.remember("Melanie: Did you go to the pottery class downtown?", actor=chat, event_at=at)
    app.remember("Caroline: Yes, the pottery class was lovely, I made a bowl", actor=chat, event_at=at)
    app.remember("Caroline: pottery again next week?", actor=chat, event_at=at)
    app.remember("We cooked pasta on Sunday", event_at=at)
    for mode in ("keyword", "vector", "hybrid", "full"):
        hits = app.recall(RecallQuery("pottery class", mode=mode)).hits  # type: ignore[arg-type]
        assert hits
        for hit in hits:
            fields = {k: getattr(hit.evidence, k) for k in hit.evidence.__dataclass_fields__}
            scores = {k: v for k, v in fields.items() if not k.endswith("_rank")}
            assert all(_in_unit_range(v) for v in scores.values()), (mode, scores)
            assert 0.0 <= hit.confidence <= 1.0
    best = app.recall(RecallQuery("pottery class", mode="keyword")).hits[0]
    assert best.evidence.lexical == 1.0 and best.evidence.coverage == 1.0


def test_positive_feedback_is_an_access_and_negative_is_not(lexical_app: SignetApp) -> None:
    memory_id = lexical_app.remember("The billing service is written in Go").id
    lexical_app.feedback(memory_id, "negative")
    assert lexical_app.get(memory_id).access_count == 0
    lexical_app.feedback(memory_id, "positive")
    assert lexical_app.get(memory_id).access_count == 1


def test_the_hooks_prompt_floor_is_at_least_the_agent_floor() -> None:
    """Without vectors the prompt hook injects a hit only when its confidence reaches
    hooks.min_relevance, a floor never below the agent floor (with vectors the floor reads the
    judge's probability: signet/injection/judge.py)."""
    from signet.config import HooksConfig
    from signet.recall.confidence import AGENT_MIN_CONFIDENCE, agent_min_confidence

    assert HooksConfig().min_relevance >= AGENT_MIN_CONFIDENCE == agent_min_confidence()
