"""The no-LLM extractor on transcripts and plain notes."""

from __future__ import annotations

import pytest

from signet.pipeline.rule_extractor import RULE_CONFIDENCE, extract_without_llm

TRANSCRIPT = """User: Hi there! I just moved to Lisbon from Berlin last month.
Assistant: Welcome to Lisbon! I am an assistant and I like Paris a lot.
User: Thanks. I really like the food here, and my favorite dish is Bacalhau.
I work at Acme Corp as a backend engineer on the PostgreSQL team.
User: Can you recommend a good cafe near Alfama?
User: ok
User: I decided to buy a Ford Mustang next year.
Assistant: Great choice. The Mustang has a V8 engine.
User: I don't drink coffee anymore."""


def test_transcript_yields_the_users_statements_in_the_third_person() -> None:
    result = extract_without_llm(TRANSCRIPT)
    assert [(f.content, f.type) for f in result.facts] == [
        ("The user just moved to Lisbon from Berlin last month.", "fact"),
        (
            "The user really likes the food here, and the user's favorite dish is Bacalhau.",
            "preference",
        ),
        ("The user works at Acme Corp as a backend engineer on the PostgreSQL team.", "fact"),
        ("The user decided to buy a Ford Mustang next year.", "decision"),
        ("The user doesn't drink coffee anymore.", "fact"),
    ]
    assert {f.confidence for f in result.facts} == {RULE_CONFIDENCE}
    assert result.warnings == ()


def test_assistant_lines_are_never_extracted() -> None:
    result = extract_without_llm(TRANSCRIPT)
    text = " ".join(f.content for f in result.facts)
    assert "Paris" not in text and "assistant" not in text and "V8" not in text
    assert "Paris" not in {e.target for e in result.entities}


def test_transcript_entities_are_names_the_user_mentioned() -> None:
    result = extract_without_llm(TRANSCRIPT)
    assert [e.target for e in result.entities] == [
        "Lisbon",
        "Berlin",
        "Bacalhau",
        "Acme Corp",
        "PostgreSQL",
        "Alfama",
        "Ford Mustang",
    ]
    assert {(e.source, e.relationship, e.confidence) for e in result.entities} == {
        ("user", "mentions", 0.5)
    }


@pytest.mark.parametrize(
    ("note", "content", "kind"),
    [
        ("I prefer tabs over spaces.", "The user prefers tabs over spaces.", "preference"),
        (
            "I'm allergic to peanuts and shellfish.",
            "The user is allergic to peanuts and shellfish.",
            "fact",
        ),
        ("I've been using Neovim for years.", "The user has been using Neovim for years.", "fact"),
        (
            "I'll switch the blog to Hugo in May.",
            "The user will switch the blog to Hugo in May.",
            "decision",
        ),
        ("I hate waking up early.", "The user hates waking up early.", "preference"),
        ("I go climbing every Sunday.", "The user goes climbing every Sunday.", "fact"),
        (
            "I usually study Japanese at night.",
            "The user usually studies Japanese at night.",
            "fact",
        ),
        ("My sister lives in Porto.", "The user's sister lives in Porto.", "fact"),
        (
            "I'm going to plan a trip to Kyoto.",
            "The user is going to plan a trip to Kyoto.",
            "decision",
        ),
        (
            "To deploy, first run the tests and then push to main.",
            "To deploy, first run the tests and then push to main.",
            "procedural",
        ),
        (
            "The staging database runs on port 5433.",
            "The staging database runs on port 5433.",
            "fact",
        ),
    ],
)
def test_plain_notes(note: str, content: str, kind: str) -> None:
    (fact,) = extract_without_llm(note).facts
    assert (fact.content, fact.type) == (content, kind)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks!",
        "ok",
        "Hi there, thank you so much.",
        "What time is the meeting tomorrow?",
        "Can you summarize this thread for me",
        "Please write a haiku about spring.",
        "Good morning everyone",
        "Sounds good.",
        "word " * 70 + "is long.",
    ],
)
def test_no_facts_from_filler_questions_requests_or_overlong_text(text: str) -> None:
    assert extract_without_llm(text).facts == ()


def test_filler_before_a_statement_is_stripped() -> None:
    (fact,) = extract_without_llm("Ok, so I moved to Berlin in 2021.").facts
    assert fact.content == "The user moved to Berlin in 2021."


def test_a_capitalised_first_word_needs_confirmation() -> None:
    once = extract_without_llm("Lisbon has great food and the trams are old.")
    assert once.entities == ()
    twice = extract_without_llm("Lisbon has great food. I want to live in Lisbon someday.")
    assert [e.target for e in twice.entities] == ["Lisbon"]


def test_tech_names_count_anywhere_and_calendar_words_never() -> None:
    result = extract_without_llm("PostgreSQL runs on AWS since March and I use macOS on Monday.")
    assert [e.target for e in result.entities] == ["PostgreSQL", "AWS", "macOS"]


def test_duplicate_statements_are_kept_once() -> None:
    result = extract_without_llm("User: I like green tea.\nUser: I like green tea.")
    assert len(result.facts) == 1


def test_facts_are_capped_with_a_warning() -> None:
    text = "\n".join(f"I visited city number {i} last year." for i in range(25))
    result = extract_without_llm(text)
    assert len(result.facts) == 20
    assert result.warnings == ("dropped 5 facts over the cap of 20",)
