"""Conversation context: a turn's lexical evidence lifts its neighbours in the same session."""

from __future__ import annotations

from signet.app import SignetApp
from signet.recall import context
from signet.types import Actor, MemoryFilters, RecallQuery

QUESTION = "Melanie: Did you finally go to the pottery class downtown?"
ANSWER = "Caroline: Yes, last week! I loved it and made a bowl."
CHAT = Actor(session_id="chat-1")


def _ids(app: SignetApp, text: str, limit: int = 10) -> list[str]:
    query = RecallQuery(text, limit=limit, mode="keyword", touch=False)
    return [h.memory.id for h in app.recall(query).hits]


def _neighbours(app: SignetApp, ids: list[str]) -> dict[str, list[str]]:
    """The conversation neighbours as the backend's recall reads find them."""
    with app.recaller.reads.reader() as reader:
        return reader.neighbours(ids, same_project=False)


def _distractors(app: SignetApp, session: str | None = None) -> None:
    actor = Actor(session_id=session)
    for text in ("We cooked pasta on Sunday", "The bus was late again", "My sister called"):
        app.remember(text, actor=actor, event_at="2023-05-09T10:00:00")


def test_answer_turn_is_found_through_its_question(lexical_app: SignetApp) -> None:
    actor = Actor(session_id="chat-1")
    lexical_app.remember(QUESTION, actor=actor, event_at="2023-05-08T13:56:00")
    answer = lexical_app.remember(ANSWER, actor=actor, event_at="2023-05-08T13:56:00").id
    _distractors(lexical_app)
    assert answer in _ids(lexical_app, "pottery class")
    lexical_app.recaller = lexical_app.recaller.respec(context_weight=0.0)
    assert answer not in _ids(lexical_app, "pottery class")


def test_context_ranks_below_the_matching_turn(lexical_app: SignetApp) -> None:
    chat = Actor(session_id="chat-1")
    question = lexical_app.remember(QUESTION, actor=chat, event_at="2023-05-08T13:56:00").id
    answer = lexical_app.remember(ANSWER, actor=chat, event_at="2023-05-08T13:56:00").id
    assert _ids(lexical_app, "pottery class")[:2] == [question, answer]


def test_memories_sharing_no_conversation_are_not_context(lexical_app: SignetApp) -> None:
    """Two notes remembered a minute apart, with no session or source, are not context."""
    billing = lexical_app.remember("The billing service is written in Go").id
    lexical_app.remember("My cat is named Whiskers")
    assert _ids(lexical_app, "billing service language") == [billing]


def test_a_shared_source_is_a_conversation(lexical_app: SignetApp) -> None:
    at = "2023-05-08T13:56:00"
    question = lexical_app.remember(QUESTION, source_id="transcript-7", event_at=at).id
    lexical_app.remember("The bus was late again", source_id="other", event_at=at)
    answer = lexical_app.remember(ANSWER, source_id="transcript-7", event_at=at).id
    loose = lexical_app.remember("My sister called", event_at=at).id
    links = _neighbours(lexical_app, [question, loose])
    assert links == {question: [answer]}


def test_context_is_its_own_evidence_never_lexical(lexical_app: SignetApp) -> None:
    chat = Actor(session_id="chat-1")
    lexical_app.remember(QUESTION, actor=chat, event_at="2023-05-08T13:56:00")
    answer = lexical_app.remember(ANSWER, actor=chat, event_at="2023-05-08T13:56:00").id
    hits = lexical_app.recall(RecallQuery("pottery class", mode="keyword")).hits
    lent = next(h for h in hits if h.memory.id == answer)
    assert lent.evidence.lexical is None and lent.evidence.lexical_rank is None
    assert lent.evidence.context == 1.0
    assert hits[0].evidence.lexical == 1.0 and hits[0].evidence.context is None


def test_other_sessions_are_not_context(lexical_app: SignetApp) -> None:
    lexical_app.remember(QUESTION, actor=Actor(session_id="chat-1"), event_at="2023-05-08T13:56:00")
    answer = lexical_app.remember(
        ANSWER, actor=Actor(session_id="chat-2"), event_at="2023-05-08T13:56:00"
    ).id
    assert answer not in _ids(lexical_app, "pottery class")


def test_turns_far_apart_in_time_are_not_context(lexical_app: SignetApp) -> None:
    lexical_app.remember(QUESTION, actor=CHAT, event_at="2023-05-08T13:56:00")
    answer = lexical_app.remember(ANSWER, actor=CHAT, event_at="2023-06-20T09:00:00").id
    assert answer not in _ids(lexical_app, "pottery class")


def test_deleted_turns_are_skipped_over(lexical_app: SignetApp) -> None:
    question = lexical_app.remember(QUESTION, actor=CHAT, event_at="2023-05-08T13:56:00").id
    between = lexical_app.remember("Melanie: hold on", actor=CHAT, event_at="2023-05-08T13:56:00").id
    answer = lexical_app.remember(ANSWER, actor=CHAT, event_at="2023-05-08T13:56:00").id
    lexical_app.forget(between)
    links = _neighbours(lexical_app, [question])
    assert links == {question: [answer]}
    assert answer in _ids(lexical_app, "pottery class")


def test_filters_still_apply_to_context(lexical_app: SignetApp) -> None:
    lexical_app.remember(QUESTION, actor=CHAT, event_at="2023-05-08T13:56:00", project="art")
    answer = lexical_app.remember(ANSWER, actor=CHAT, event_at="2023-05-08T13:56:00", project="home").id
    filtered = lexical_app.recall(
        RecallQuery("pottery class", mode="keyword", touch=False, filters=MemoryFilters(project="art"))
    )
    assert answer not in [h.memory.id for h in filtered.hits]
    assert answer in _ids(lexical_app, "pottery class")


def test_with_context_scales_channels_alike() -> None:
    bm25 = [("a", 12.0), ("b", 7.0), ("c", 2.0)]
    cosine = [("a", 0.62), ("b", 0.61), ("c", 0.60)]
    links = {"a": ["x"]}
    for ranking in (bm25, cosine):
        rescored = dict(context.with_context(ranking, links, weight=0.5))
        assert rescored["x"] == 0.5 and rescored["a"] == 1.0 and rescored["c"] == 0.0
