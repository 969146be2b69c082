"""Long queries (a pasted prompt, the conversation so far): the lexical side searches the
query's rarest words, and a query cut for length keeps its end."""

from __future__ import annotations

from signet.app import SignetApp
from signet.types import RecallQuery

CHATTER = " ".join(f"word{i} filler{i}" for i in range(40))


def _ids(app: SignetApp, text: str) -> list[str]:
    return [h.memory.id for h in app.recall(RecallQuery(text, mode="keyword")).hits]


def test_the_rare_word_at_the_end_of_a_long_query_is_searched(lexical_app: SignetApp) -> None:
    for i in range(5):
        lexical_app.remember(f"word{i} filler{i} and more word{i}")
    target = lexical_app.remember("The zanzibar trip is booked for June").id
    assert target in _ids(lexical_app, CHATTER + " so when is the zanzibar trip?")


def test_a_query_cut_for_length_keeps_its_end(lexical_app: SignetApp) -> None:
    target = lexical_app.remember("The zanzibar trip is booked for June").id
    limit = lexical_app.config.search.max_query_chars
    long_text = "blah " * limit + "when is the zanzibar trip?"
    assert len(long_text) > limit
    assert _ids(lexical_app, long_text) == [target]
