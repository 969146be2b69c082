"""The no-LLM extractor on transcripts and plain notes."""

from __future__ import annotations

from pathlib import Path

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


def test_a_capitalised_first_word_needs_a_verb_after_it_or_confirmation() -> None:
    assert extract_without_llm("Dashboards live in the old wiki these days.").entities == ()
    once = extract_without_llm("Lisbon has great food and the trams are old.")
    assert [e.target for e in once.entities] == ["Lisbon"]
    twice = extract_without_llm("Lisbon, in spring. I want to live in Lisbon someday.")
    assert [e.target for e in twice.entities] == ["Lisbon"]


def test_tech_names_count_anywhere_and_calendar_words_never() -> None:
    result = extract_without_llm("PostgreSQL runs on AWS since March and I use macOS on Monday.")
    mentioned = [e.target for e in result.entities if e.relationship == "mentions"]
    assert mentioned == ["PostgreSQL", "AWS", "macOS"]


def test_duplicate_statements_are_kept_once() -> None:
    result = extract_without_llm("User: I like green tea.\nUser: I like green tea.")
    assert len(result.facts) == 1


def test_facts_are_capped_with_a_warning() -> None:
    text = "\n".join(f"I visited city number {i} last year." for i in range(25))
    result = extract_without_llm(text)
    assert len(result.facts) == 20
    assert result.warnings == ("dropped 5 facts over the cap of 20",)


SUMMARY = """Session: The billing service must never be deployed on Fridays.

## Decisions
- Let's go with GitHub Actions for the deploy job.

## Constraints
- The billing service must never be deployed on Fridays.

## Facts
- Should a migration fail, roll back before lunch.

## Open questions
- Should we move the deploy job to GitHub Actions?
"""


def test_headings_labels_and_stop_words_never_become_entities() -> None:
    doc = SUMMARY + "\n# Onboarding New Engineers\n\nOpen: nothing yet.\nTODO: ask Jonas.\n"
    # The memory store keeps content on one line: the same markdown, flattened.
    for text in (doc, " ".join(doc.split())):
        entities = extract_without_llm(text).entities
        names = {e.target for e in entities} | {e.source for e in entities}
        for noise in ("Constraints", "Decisions", "Facts", "Open", "Should", "Onboarding New",
                      "Onboarding New Engineers", "Open questions", "TODO", "GitHub", "Fridays"):
            assert noise not in names
        assert {"GitHub Actions", "Jonas"} <= names


def test_sentence_initial_names_followed_by_a_verb_are_found() -> None:
    result = extract_without_llm(
        "User: Alice owns the billing service. Marta maintains the indexer.\n"
        "User: Contact Jonas Weber for laptops. Keep answers short."
    )
    mentioned = {e.target for e in result.entities if e.relationship == "mentions"}
    assert mentioned == {"Alice", "Marta", "Jonas Weber"}


def test_plainly_stated_relations_are_extracted() -> None:
    result = extract_without_llm(
        "Our search API is written in Rust and uses PostgreSQL for storage. "
        "Priya owns the ranking code. I use VS Code at work. Does Bob use Vim?"
    )
    relations = {(e.source, e.relationship, e.target) for e in result.entities
                 if e.relationship != "mentions"}
    assert relations == {
        ("search API", "is written in", "Rust"), ("search API", "uses", "PostgreSQL"),
        ("Priya", "owns", "ranking code"), ("user", "uses", "VS Code"),
    }


def test_entity_precision_on_the_labelled_set_and_no_layout_word_among_the_names() -> None:
    from signet.bench.entities_bench import DEFAULT_DATA, run_entities

    result = run_entities(Path(__file__).parents[2] / DEFAULT_DATA)
    assert result["entity_precision"] >= 0.9 and result["entity_recall"] >= 0.85
    assert result["relation_precision"] >= 0.9
    false = {name for item in result["per_item"] for name in item["false_entities"]}
    assert not false & {"Constraints", "Decisions", "Facts", "Open", "Should", "Entities", "TODO"}
