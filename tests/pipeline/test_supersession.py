"""The rule that says a newer memory replaces an older one, on statements (no LLM)."""

from __future__ import annotations

import pytest

from signet.pipeline.supersession import attribute, supersedes


@pytest.mark.parametrize(("older", "newer"), [
    ("We decided to use PostgreSQL", "we now use MongoDB"),
    ("Priya's phone number is 555-0100", "Priya's phone number is 555-0199"),
    ("The phone number of Priya is 555-0100", "Priya's phone number is now 555-0199."),
    ("My favorite color is blue", "The user's favorite color is green"),
    ("Our deploy target is Fly.io", "Our deploy target is Render"),
])
def test_a_newer_value_replaces_the_older(older: str, newer: str) -> None:
    assert supersedes(older, newer)


@pytest.mark.parametrize(("older", "newer"), [
    ("Priya's phone number is 555-0100", "Priya's phone number is 555-0100"),  # same value
    ("Priya's email is p@example.com", "Ben's email is b@example.com"),  # another owner
    ("Priya's email is p@example.com", "Priya's phone number is 555-0199"),  # another attribute
    ("Priya's hobbies are chess and golf", "Priya's hobbies are tennis"),  # may be several
    ("Priya's phone number is 555-0199", "Priya's phone number was 555-0100"),  # the past
    ("We use PostgreSQL", "We use MongoDB"),  # no marker, no attribute: both may hold
])
def test_other_pairs_replace_nothing(older: str, newer: str) -> None:
    assert not supersedes(older, newer)


def test_only_a_one_clause_attribute_statement_is_read_as_one() -> None:
    assert attribute("Priya Shah's manager is Ben.") == ("priya shah", "manager", "ben")
    for text in ("Alice is a doctor", "The billing service is written in Go",
                 "The user prefers tea.", "Priya's team is not in Berlin"):
        assert attribute(text) is None, text
