"""What ranks first must be the memory that answers: through the real recall, on a real SQLite
store with the bundled model.

- a session summary never outranks a memory holding every query word the summary matches (the
  summary of a two-prompt session, "asked about Go", below the fact it mentions);
- a document competes by its best passage: a chunk sharing one common word with the query stays
  below the memories that answer it, however many query words the rest of the document holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.types import RecallQuery

FACTS = (
    "Our team uses tabs, never spaces, in Go code",
    "The billing service listens on port 8443 behind the internal load balancer",
    "Port 8443 of the billing service only accepts mutual TLS connections",
    "The billing service's listen port is set in deploy/billing.yaml",
    "My cat is named Whiskers",
    "The weekly standup moved to Thursday afternoon",
)

# An extractive summary of a session of two short prompts (lineage/summarize.py's form).
SHORT_SUMMARY = "Asked about Go.\n\n## Open questions\n- What about Go?\n"

# A handbook whose passages each hold one of the query's words, none of them about the question.
HANDBOOK = "\n\n".join((
    " ".join(["Our customer service desk answers calls on weekdays from nine to five, and the"
              " desk closes on public holidays; the team rotates so that someone always covers"
              " lunch, and every caller is asked for a ticket number first."] * 6),
    " ".join(["The port of Rotterdam is the largest harbour in Europe, and the ships that dock"
              " there unload containers onto trains and barges bound for the Rhine valley and"
              " the industrial towns along it."] * 6),
    " ".join(["At the Friday all-hands everyone is invited to listen to a short talk about the"
              " quarter, and the finance team explains billing for new customers, how invoices"
              " are numbered and when reminders go out."] * 6),
))


@pytest.fixture(scope="module")
def real_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignetApp]:
    path: Path = tmp_path_factory.mktemp("hygiene") / "ws"
    with SignetApp.open(Config.default(path)) as app:  # the bundled local model
        for text in FACTS:
            app.remember(text)
        for n, summary in enumerate((SHORT_SUMMARY, "Asked about Go.")):
            app.remember(
                summary, type="summary", source_type="session", source_id=f"s-go{n}",
                session_id=f"s-go{n}",
            )
        app.documents.ingest_text(HANDBOOK, title="Handbook")
        app.run_pipeline_until_idle(only=["documents"])
        app.run_pipeline_until_idle(only=["embed"])
        yield app


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_a_short_sessions_summary_ranks_below_the_fact_it_mentions(
    real_app: SignetApp, mode: str
) -> None:
    for text in ("Go", "Go formatting", "what did we say about Go", "how do we indent Go code"):
        hits = real_app.recall(RecallQuery(text, mode=mode)).hits  # type: ignore[arg-type]
        contents = [h.memory.content for h in hits]
        assert FACTS[0] in contents, text
        summaries = [i for i, h in enumerate(hits) if h.memory.type == "summary"]
        assert contents.index(FACTS[0]) < min(summaries, default=len(hits)), (text, contents)


@pytest.mark.parametrize("mode", ["full", "hybrid", "keyword"])
def test_a_document_competes_by_its_best_passage(real_app: SignetApp, mode: str) -> None:
    hits = real_app.recall(
        RecallQuery("which port does the billing service listen on", mode=mode)  # type: ignore[arg-type]
    ).hits
    direct = {FACTS[1], FACTS[2], FACTS[3]}
    top = [h.memory.content for h in hits[:3]]
    assert set(top) == direct, top



def test_a_document_is_ranked_by_its_passages_on_either_backend(
    tmp_path: Path, backend_store: StoreConfig
) -> None:
    # The same rule over each backend's recall reads, with the bundled model.
    with SignetApp.open(Config.default(tmp_path / "ws").replace(store=backend_store)) as app:
        for text in FACTS[1:4]:
            app.remember(text)
        app.documents.ingest_text(HANDBOOK, title="Handbook")
        app.run_pipeline_until_idle(only=["documents"])
        app.run_pipeline_until_idle(only=["embed"])
        hits = app.recall(RecallQuery("which port does the billing service listen on")).hits
    assert {h.memory.content for h in hits[:3]} == set(FACTS[1:4])
    assert any(h.memory.source_type == "document" for h in hits[3:])
