"""The prompt hook's name check (injection/names.py): a prompt that names only things none of
recall's candidates mentions asks about something not stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.injection.names import names_unknown
from signet.injection.prompt_submit import unknown_names
from signet.pipeline.rule_extractor import names_in
from signet.workspace import init_workspace

GATEWAY = "Priya owns the payments gateway integration; ask her before changing the Stripe webhook handler."


def test_the_names_a_prompt_mentions() -> None:
    assert names_in("Who owns the PayPal integration?") == ["PayPal"]
    assert names_in("Which city have both Jean and John visited?") == ["Jean", "John"]
    assert names_in("What kind of tea do I like?") == []  # nothing named: no evidence


@pytest.mark.parametrize(("prompt", "texts", "unknown"), [
    ("Who owns the PayPal integration?", [GATEWAY], True),
    ("Who owns the Stripe webhook handler?", [GATEWAY], False),
    # Any one name found is enough; each found by any of its words.
    ("Did Nate and Joanna go hiking?", ["Joanna went hiking in May."], False),
    ("Where is Gina's HR internship?", ["Gina starts at the HR department."], False),
    # Spelled another way: a shared prefix of five letters, a plural, CamelCase words.
    ("Which PostgreSQL version do we run?", ["We run Postgres 16."], False),
    ("How are invoice PDFs rendered?", ["An invoice PDF is rendered by weasyprint."], False),
    ("Why does TestLedgerSync fail?", ["The ledger sync test is flaky on CI."], False),
    # An acronym written out as the initials of consecutive words, or not at all.
    ("Should I put this refactor in one big PR?", ["The user prefers small pull requests."], False),
    ("What is the SLA we promise enterprise customers?", ["Load tests use k6 scripts."], True),
    # A question about someone the store never heard of, near its topics.
    ("What did Caroline paint last summer?", ["Melanie painted a lake last summer."], True),
    ("What kind of tea do I like?", ["The user prefers coffee."], False),
    ("Who owns the PayPal integration?", [], True),
])
def test_a_prompt_naming_only_what_no_candidate_mentions(
    prompt: str, texts: list[str], unknown: bool
) -> None:
    assert names_unknown(prompt, texts) is unknown


def test_the_check_reads_the_prompt_as_far_as_recall_does(tmp_path: Path) -> None:
    """A prompt past search.max_query_chars (a pasted log) is checked as cut, as recall reads
    it: a name past the cut is not looked for (nor read: megabytes would cost the budget)."""
    init_workspace(tmp_path / "ws")
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=None) as app:
        cut = app.config.search.max_query_chars
        assert unknown_names(app, "Who owns the PayPal integration?", [])
        assert not unknown_names(app, "x " * cut + "Who owns the PayPal integration?", [])
