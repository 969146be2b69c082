"""Long queries (a pasted prompt, the conversation so far): the lexical side searches the
query's rarest words, the dense side embeds the query's end, and a query cut for length keeps
its end."""

from __future__ import annotations

from pathlib import Path

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.recall.hybrid import QUERY_EMBED_WORDS
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


class RecordingEmbedder(HashEmbedder):
    """The hash embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.asked: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.asked.extend(texts)
        return super().embed(texts)


def test_the_dense_channel_embeds_the_end_of_a_long_query(tmp_path: Path) -> None:
    """A prompt longer than the model's window was embedded by its start (the model cuts the
    rest), so the question at its end never reached the dense channel."""
    embedder = RecordingEmbedder()
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=embedder) as app:
        app.remember("The zanzibar trip is booked for June")
        question = "so when is the zanzibar trip?"
        embedder.asked.clear()
        app.recall(RecallQuery(" ".join(f"turn{i}" for i in range(400)) + " " + question,
                               mode="vector"))
        (embedded,) = embedder.asked
        assert embedded.endswith(question) and "turn399" in embedded
        assert len(embedded.split()) == QUERY_EMBED_WORDS
        embedder.asked.clear()
        app.recall(RecallQuery(question, mode="vector"))
        assert embedder.asked == [question]  # a query inside the window is embedded whole
