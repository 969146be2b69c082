"""The contradiction check: a table of statement pairs, each checked in both directions."""

from __future__ import annotations

import pytest

from fakes.scripted_llm import ScriptedLLM
from signet.errors import ProviderTimeout
from signet.pipeline.contradiction import (
    ANTONYM_PAIRS,
    check_contradiction,
    detect_contradiction,
    has_temporal_supersession,
    shared_tokens,
)

# (old statement, new statement, contradicts without an LLM, signal kinds that must be present)
PAIRS: list[tuple[str, str, bool, set[str]]] = [
    # negation polarity
    (
        "The billing service uses PostgreSQL",
        "The billing service does not use PostgreSQL",
        True,
        {"negation"},
    ),
    ("The user can't eat gluten", "The user can eat gluten", True, {"negation"}),
    ("The user has never been to Japan", "The user has been to Japan twice", True, {"negation"}),
    (
        "The user always drinks coffee in the morning",
        "The user never drinks coffee in the morning",
        True,
        {"negation", "antonym"},
    ),
    # antonym pairs
    ("Email notifications are enabled", "Email notifications are disabled", True, {"antonym"}),
    ("The user's profile is public", "The user's profile is private", True, {"antonym"}),
    ("The user's account is active", "The user's account is inactive", True, {"antonym"}),
    (
        "Guests are allowed to edit the wiki",
        "Guests are denied edit rights on the wiki",
        True,
        {"antonym"},
    ),
    ("The user likes spicy food", "The user dislikes spicy food", True, {"antonym"}),
    ("The user loves jazz music", "The user hates jazz music", True, {"antonym"}),
    ("The staging server is online", "The staging server is offline", True, {"antonym"}),
    (
        "The feature flag beta_search is true",
        "The feature flag beta_search is false",
        True,
        {"antonym"},
    ),
    ("The build cache is required for CI", "The build cache is optional for CI", True, {"antonym"}),
    (
        "Prod logs are visible to contractors",
        "Prod logs are hidden from contractors",
        True,
        {"antonym"},
    ),
    ("Two-factor login is on for admins", "Two-factor login is off for admins", True, {"antonym"}),
    (
        "Backups run before the nightly deploy",
        "Backups run after the nightly deploy",
        True,
        {"antonym"},
    ),
    # value conflicts
    (
        "The billing service uses PostgreSQL",
        "The billing service migrated to MongoDB",
        True,
        {"value"},
    ),
    ("The user prefers tea", "The user prefers coffee", True, {"value"}),
    ("The user lives in Berlin", "The user lives in Paris", True, {"value"}),
    ("The user works at Google", "The user works at Meta", True, {"value"}),
    ("The default editor is Vim", "The default editor is Emacs", True, {"value"}),
    ("Dark mode is the default", "Light mode is the default", True, {"value", "antonym"}),
    ("The user's favorite color is blue", "The user's favorite color is green", True, {"value"}),
    ("The team uses GitHub Actions for CI", "The team switched to GitLab for CI", True, {"value"}),
    ("The user's family lives in Berlin", "The user's family moved to Lisbon", True, {"value"}),
    # not contradictions
    ("The API uses REST", "the endpoint returns JSON", False, set()),
    ("The user has a dog named Rex", "The quarterly report is due on Friday", False, set()),
    ("The user prefers tea", "The user prefers tea.", False, set()),
    ("The backend uses PostgreSQL", "The backend uses Redis", False, {"value"}),
    ("The frontend uses React", "The backend uses Vue", False, set()),
    ("The user prefers tea and coffee", "The user prefers coffee", False, set()),
    ("The user prefers PostgreSQL 16", "The user prefers PostgreSQL", False, set()),
    ("The user works at Acme Corp", "The user works at Acme", False, set()),
    ("The user doesn't live in Berlin anymore", "The user lives in Paris", False, {"negation"}),
    ("The user likes hiking", "The user likes cooking", False, set()),
    ("The user has a cat", "The user has a dog", False, set()),
    ("The user drinks coffee every morning", "The user drinks coffee with oat milk", False, set()),
    # the two-shared-token gate: only "notification" (or only "user") is shared
    ("Notifications are enabled", "Notifications are disabled", False, set()),
    ("The user is vegetarian", "The user is tall", False, set()),
]


@pytest.mark.parametrize(("old", "new", "contradicts", "kinds"), PAIRS, ids=[p[1] for p in PAIRS])
def test_fast_path_verdict_is_the_same_in_both_directions(
    old: str, new: str, contradicts: bool, kinds: set[str]
) -> None:
    for a, b in ((old, new), (new, old)):
        verdict = check_contradiction(a, b)
        assert verdict.contradicts is contradicts, (a, b, verdict)
        assert kinds <= {s.kind for s in verdict.signals}, (a, b, verdict.signals)
        assert verdict.used_llm is False
        if not kinds:
            assert verdict.signals == ()


def test_the_table_is_large_enough() -> None:
    assert len(PAIRS) >= 30


def test_signals_have_the_same_kinds_and_confidences_both_ways() -> None:
    for old, new, _, _ in PAIRS:
        forward = [(s.kind, s.confidence) for s in detect_contradiction(old, new)]
        backward = [(s.kind, s.confidence) for s in detect_contradiction(new, old)]
        assert forward == backward, (old, new)


def test_nothing_is_checked_below_two_shared_tokens() -> None:
    assert len(shared_tokens("Notifications are enabled", "Notifications are disabled")) == 1
    assert detect_contradiction("Notifications are enabled", "Notifications are disabled") == []
    signals = detect_contradiction(
        "Email notifications are enabled", "Email notifications are disabled"
    )
    assert "antonym" in {s.kind for s in signals}


def test_a_negation_only_in_a_loosely_related_sentence_is_weak() -> None:
    (signal,) = detect_contradiction(
        "The user's API key is not stored in git", "The user stores the API key in 1Password"
    )
    assert signal.kind == "negation" and signal.confidence < 0.6


def test_antonym_table_is_symmetric_and_large() -> None:
    assert len(ANTONYM_PAIRS) >= 20
    for x, y, _ in ANTONYM_PAIRS:
        a, b = f"The deploy job result is {x} today", f"The deploy job result is {y} today"
        assert any(s.kind == "antonym" for s in detect_contradiction(a, b)), (x, y)
        assert any(s.kind == "antonym" for s in detect_contradiction(b, a)), (y, x)


def test_antonyms_present_on_both_sides_do_not_fire() -> None:
    a = "The toggle switches between enabled and disabled states"
    b = "The toggle shows disabled and enabled states in grey"
    assert not any(s.kind == "antonym" for s in detect_contradiction(a, b))


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("The user now lives in Paris", True),
        ("The user currently works at Meta", True),
        ("The user no longer drinks coffee", True),
        ("As of March, the team uses GitLab", True),
        ("The team switched to GitLab", True),
        ("From now on, deploys happen on Fridays", True),
        ("The user doesn't eat meat anymore", True),
        ("The user lives in Paris", False),
        ("The user knows Python", False),
        ("The snow is deep", False),
    ],
)
def test_temporal_supersession_markers(text: str, marked: bool) -> None:
    assert has_temporal_supersession(text) is marked


RELATED_CLEAN = ("The user has a dog named Rex", "The user has a dog named Max")


def test_clean_fast_path_with_three_shared_tokens_asks_the_llm() -> None:
    llm = ScriptedLLM('{"contradicts": true, "confidence": 0.85, "reason": "different names"}')
    verdict = check_contradiction(*RELATED_CLEAN, llm=llm)
    assert verdict.contradicts and verdict.used_llm
    assert verdict.confidence == 0.85 and verdict.reason == "different names"
    assert len(llm.prompts) == 1
    prompt = llm.prompts[0]
    assert "The API uses REST" in prompt and "Light mode is the default" in prompt
    assert RELATED_CLEAN[0] in prompt and RELATED_CLEAN[1] in prompt


def test_llm_saying_no_or_unsure_does_not_block() -> None:
    no = ScriptedLLM('{"contradicts": false, "confidence": 0.9, "reason": "complementary"}')
    assert check_contradiction(*RELATED_CLEAN, llm=no).contradicts is False
    unsure = ScriptedLLM('{"contradicts": true, "confidence": 0.4, "reason": "maybe"}')
    assert check_contradiction(*RELATED_CLEAN, llm=unsure).contradicts is False


def test_a_fast_path_hit_never_calls_the_llm() -> None:
    llm = ScriptedLLM('{"contradicts": false, "confidence": 1}')
    verdict = check_contradiction("The user lives in Berlin", "The user lives in Paris", llm=llm)
    assert verdict.contradicts and not verdict.used_llm and llm.prompts == []


def test_fewer_than_three_shared_tokens_never_calls_the_llm() -> None:
    llm = ScriptedLLM('{"contradicts": true, "confidence": 1}')
    verdict = check_contradiction("The user has a cat", "The user has a dog", llm=llm)
    assert not verdict.contradicts and llm.prompts == []


def test_the_same_statement_never_calls_the_llm() -> None:
    llm = ScriptedLLM('{"contradicts": true, "confidence": 1}')
    assert not check_contradiction("The user has a dog", "the user has a dog.", llm=llm).contradicts
    assert llm.prompts == []


@pytest.mark.parametrize(
    "llm",
    [
        ScriptedLLM("I think these are fine."),
        ScriptedLLM('{"verdict": "no"}'),
        ScriptedLLM('{"contradicts": "perhaps"}'),
        ScriptedLLM(error=ProviderTimeout("ollama timed out")),
    ],
    ids=["prose", "wrong keys", "not a boolean", "timeout"],
)
def test_slow_path_failure_does_not_contradict_and_says_why(llm: ScriptedLLM) -> None:
    verdict = check_contradiction(*RELATED_CLEAN, llm=llm)
    assert verdict.contradicts is False and verdict.used_llm is True
    assert verdict.reason.startswith("slow path failed")


def test_string_booleans_from_a_small_model_are_accepted() -> None:
    llm = ScriptedLLM('{"contradicts": "yes", "confidence": 0.9, "reason": "r"}')
    assert check_contradiction(*RELATED_CLEAN, llm=llm).contradicts is True


def test_a_confidence_written_as_a_string_is_read() -> None:
    llm = ScriptedLLM('{"contradicts": true, "confidence": "0.85", "reason": "different names"}')
    assert check_contradiction(*RELATED_CLEAN, llm=llm).confidence == 0.85
