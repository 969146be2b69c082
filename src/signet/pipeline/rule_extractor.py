"""The deterministic extractor used when no LLM is configured (provider "none").

The user's own statements (4 to 60 words, user turns only) rewritten to the third person with a type
guess at confidence 0.6, the names they mention as (user, mentions, name), and relations stated
plainly ("X uses Y"). It misses questions, the assistant's facts, facts across sentences and
lowercase names; the raw memory is kept, so a missed fact is still found.
"""

from __future__ import annotations

import re

from signet.pipeline.extraction import (
    MAX_ENTITIES,
    MAX_FACTS,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
)

__all__ = ["RULE_CONFIDENCE", "extract_without_llm", "extraction_mode", "names_in"]

RULE_CONFIDENCE = 0.6
ENTITY_CONFIDENCE = 0.5
MIN_WORDS, MAX_WORDS = 4, 60



def extraction_mode(llm_configured: bool, min_fact_confidence: float) -> str:
    """What extraction produces: "llm" (facts and entities from the model), "rules" (no LLM, the
    write gate lowered to admit the rule facts), or "entities" (no LLM at the default gate: names
    only). At the default gate (0.7) every rule fact (0.6) would be proposed and refused for
    nothing, so "entities" does not propose them."""
    if llm_configured:
        return "llm"
    return "rules" if RULE_CONFIDENCE >= min_fact_confidence else "entities"


_ROLE = re.compile(
    r"^\s*\**(user|human|me|assistant|ai|agent|system|bot|model)\**\s*:\s?(.*)$", re.I
)
_USER_ROLES = {"user", "human", "me"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_FILLER = re.compile(
    r"^(?:(?:hi there|hello there|hey there|thank you|thanks|ok(?:ay)?|sure|well|so|yes|yeah|no|"
    r"hi|hello|hey|great|cool|alright|oh|btw|by the way|anyway|got it|nice|awesome|perfect)"
    r"(?:[,!.]+\s*|\s+|$))+",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019-]*")

_QUESTION_STARTS = frozenset(
    "how what why where when who which whose is are do does did can could would will should "
    "shall may".split()
)
_IMPERATIVE_STARTS = frozenset(
    "please let's lets tell show give write make help explain list find remind create fix add "
    "remove run check try send open search look summarize translate generate don't you your "
    "thank".split()
)
_FIRST_PERSON = frozenset("i i'm i've i'd i'll my me mine myself".split())
_FINITE = frozenset(
    """
    is are was were am has have had will would can could should must does did do isn't aren't
    wasn't weren't hasn't haven't doesn't don't didn't won't can't uses prefers likes loves hates
    lives works owns needs wants drives plays runs knows eats drinks enjoys speaks studies
    teaches goes takes keeps reads writes builds starts stops depends means contains includes
    requires supports belongs costs
    """.split()
)


def extract_without_llm(content: str) -> Extraction:
    """Facts and mentioned names from the user's own words; see the module docstring."""
    content = _unflatten(content)
    sentences = [s for segment in _user_segments(content) for s in _sentences(segment)]
    facts = _facts(sentences)
    entities = _entities(sentences)
    warnings = []
    if len(facts) > MAX_FACTS:
        warnings.append(f"dropped {len(facts) - MAX_FACTS} facts over the cap of {MAX_FACTS}")
    if len(entities) > MAX_ENTITIES:
        warnings.append(
            f"dropped {len(entities) - MAX_ENTITIES} entities over the cap of {MAX_ENTITIES}"
        )
    return Extraction(tuple(facts[:MAX_FACTS]), tuple(entities[:MAX_ENTITIES]), tuple(warnings))


def names_in(text: str) -> list[str]:
    """The names `text` mentions (people, places, products, tools), as extraction finds them:
    the targets of its mentions and both ends of its plain relations, the user left out."""
    sentences = [s for segment in _user_segments(_unflatten(text)) for s in _sentences(segment)]
    names: list[str] = []
    for entity in _entities(sentences):
        ends = (entity.target,) if entity.relationship == "mentions" else (entity.source, entity.target)
        names.extend(n for n in ends if n != "user" and n not in names)
    return names


# -- turns and sentences ----------------------------------------------------------------------


_INLINE_HEADING = re.compile(r"\s(?=#{1,6}\s)")


def _unflatten(content: str) -> str:
    """Markdown stored on one line ("... ## Decisions - a. - b.", how memory content is
    normalised) back into a heading line and one line per bullet, so layout stays layout."""
    if "\n" in content.strip() or not _INLINE_HEADING.search(content):
        return content
    first, *sections = _INLINE_HEADING.split(content)
    lines = [first]
    for section in sections:
        heading, _, rest = section.partition(" - ")
        lines.append(heading)
        lines.extend(f"- {item}" for item in rest.split(" - ") if item.strip())
    return "\n".join(lines)


def _user_segments(content: str) -> list[str]:
    lines = content.splitlines()
    if not any(_ROLE.match(line) for line in lines):
        return [content]
    segments: list[str] = []
    speaking_user = False
    for line in lines:
        role = _ROLE.match(line)
        if role:
            speaking_user = role.group(1).lower() in _USER_ROLES
            line = role.group(2)
        if speaking_user:
            segments.append(line)
    return segments


def _sentences(segment: str) -> list[str]:
    out: list[str] = []
    for line in segment.splitlines():
        line = _BULLET.sub("", line).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


# -- facts ------------------------------------------------------------------------------------


def _facts(sentences: list[str]) -> list[ExtractedFact]:
    facts: list[ExtractedFact] = []
    seen: set[str] = set()
    for sentence in sentences:
        statement = _statement(sentence)
        if statement is None:
            continue
        text = _third_person(statement)
        key = text.lower().rstrip(".!")
        if key not in seen:
            seen.add(key)
            facts.append(ExtractedFact(text, _guess_type(text), RULE_CONFIDENCE))
    return facts


def _statement(sentence: str) -> str | None:
    """The sentence without leading filler, if it states something; else None."""
    text = _FILLER.sub("", sentence).strip()
    if not text or text.endswith("?"):
        return None
    words = [w.lower().replace("\u2019", "'") for w in _WORD.findall(text)]
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    if words[0] in _QUESTION_STARTS or words[0] in _IMPERATIVE_STARTS:
        return None
    first_person = bool(_FIRST_PERSON & set(words))
    declarative = bool(_FINITE & set(words)) or any(w.endswith("ed") for w in words[1:])
    procedural = _guess_type(text) == "procedural"  # "To deploy, first run ... then ..."
    if not (first_person or declarative or procedural):
        return None
    return text[0].upper() + text[1:]


_CONTRACTIONS = {"i'm": "is", "i've": "has", "i'd": "would", "i'll": "will"}
_POSSESSIVE = {"my": "the user's", "mine": "the user's", "myself": "themselves", "me": "the user"}
_ADVERBS = frozenset(
    "really also always never still just usually often sometimes now currently mostly already "
    "even only generally actually definitely totally absolutely rarely recently".split()
)
_VERB_IRREGULAR = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
}
_VERB_UNCHANGED = frozenset(
    """
    can could will would shall should may might must can't cannot couldn't won't wouldn't
    shouldn't mustn't didn't wasn't had hadn't did was used went got bought made saw took came
    found left began wrote drove ran met said told thought knew felt kept sold spent built
    taught paid ate drank gave quit put set cut let hit read
    """.split()
)


def _third_person(sentence: str) -> str:
    """Rewrite the speaker's "I"/"my"/"me" as the user, with verb agreement."""
    tokens = re.findall(r"[A-Za-z0-9'\u2019-]+|[^A-Za-z0-9'\u2019-]+", sentence)
    out: list[str] = []
    conjugate_next = False
    for token in tokens:
        low = token.lower().replace("\u2019", "'")
        if not _WORD.fullmatch(token):
            out.append(token)
            conjugate_next = conjugate_next and not token.strip()  # "I, too, ..." stops it
        elif token in ("I", "i"):
            out.append("the user")
            conjugate_next = True
        elif low in _CONTRACTIONS and token[0] in "Ii":
            out.append("the user " + _CONTRACTIONS[low])
        elif low in _POSSESSIVE:
            out.append(_POSSESSIVE[low])
        elif conjugate_next and low in _ADVERBS:
            out.append(token)
        elif conjugate_next:
            out.append(_conjugate(token))
            conjugate_next = False
        else:
            out.append(token)
    text = "".join(out)
    return text[0].upper() + text[1:] if text else text


def _conjugate(verb: str) -> str:
    low = verb.lower().replace("\u2019", "'")
    if low in _VERB_IRREGULAR:
        return _VERB_IRREGULAR[low]
    if low in _VERB_UNCHANGED or low.endswith("ed") or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "preference",
        re.compile(
            r"\b(?:likes?|loves?|prefers?|preferred|hates?|favou?rites?|enjoys?|dislikes?)\b", re.I
        ),
    ),
    (
        "decision",
        re.compile(r"\b(?:decided|decides?|will|going to|plans?|planning|chose|chosen)\b", re.I),
    ),
    (
        "procedural",
        re.compile(
            r"\bhow to\b|\bsteps?\b|\bfirst\b.*\bthen\b|\bworkflow\b|\bprocedure\b|\binstructions?\b",
            re.I,
        ),
    ),
)


def _guess_type(text: str) -> str:
    for name, pattern in _TYPE_RULES:
        if pattern.search(text):
            return name
    return "fact"


# -- entities ---------------------------------------------------------------------------------

_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_LETTER = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
_CAP = rf"(?<![{_LETTER}0-9])[{_UPPER}][{_LETTER}0-9&'\u2019-]*(?:\.(?:com|org|net|io|ai|dev)\b)?"
_NAME_RUN = re.compile(rf"{_CAP}(?:\s+(?:(?:of|de|da|del|van|von|der|la|le)\s+)?{_CAP})*")
_CAMEL = re.compile(r"^(?:[a-z]+[A-Z]|[A-Z][a-z0-9]+[A-Z])[A-Za-z0-9]*$")
_ALLCAPS = re.compile(r"^[A-Z][A-Z0-9]{1,}$")
_NOT_TECH = frozenset(
    "OK AM PM TV ID USA UK TODO FIXME NOTE WIP TBD FYI ASAP IMPORTANT TLDR NB PS RE FW".split()
)
_STARTERS = frozenset(
    """
    the a an my our your their his her its i i'm i've i'd i'll we you he she they it this that
    these those when if so and but also then yesterday today tomorrow last next thanks hi hello
    hey ok okay sure yes no please just well what where why how who can could would will do does
    did is are was were there here let's after before in on at for with from as by since some all
    every one two any not maybe actually anyway btw user assistant
    """.split()
)
# Words that start sentences, headings and list labels in ordinary prose: a capitalised run made
# only of these (and of words the same text also writes in lowercase) is not a name.
_COMMON = _STARTERS | _QUESTION_STARTS | _IMPERATIVE_STARTS | frozenset(
    """
    constraints constraint decisions decision decided facts fact open questions question
    entities entity preferences preference summary summaries notes note session sessions todo
    overview background context goals goal status steps step action actions items item update
    updates introduction setup usage example examples important warning warnings todo done
    next previous new old first second third finally also important result results details
    should shall must may might need needs nothing everything everyone everybody nobody
    something someone somebody anything anyone none each both either neither other others
    another such many much more most few less least own same keep keeps stay stays contact
    use uses using move moved ship ships deploy deployed build built set update added
    onboarding engineers engineer team teams project projects plan plans task tasks issue
    issues today tonight morning evening week weeks month months year years day days time
    good great fine sorry understood noted right wrong true false yes no agreed done
    """.split()
)
_CALENDAR = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday january february march april may
    june july august september october november december
    """.split()
)
_LABEL = re.compile(r"^\**([A-Za-z][A-Za-z ]{0,30}?)\**\s*:\s+(?=\S)")
_VERBISH = _FINITE | frozenset(
    "said joined left moved maintains maintain leads manages recommended wrote built runs "
    "joins leads asked told thinks".split()
)
_Found = tuple[tuple[int, int], str]  # ((sentence index, offset), name): text order


def _entities(sentences: list[str]) -> list[ExtractedEntity]:
    lowercase = {w for s in sentences for w in _WORD.findall(s) if w.islower()}
    initial, later = _name_candidates(sentences, lowercase)
    counts: dict[str, int] = {}
    for _, name in initial + later:
        counts[name.lower()] = counts.get(name.lower(), 0) + 1
    later_keys = {name.lower() for _, name in later}
    # A capitalised first word is a name when the text confirms it somewhere else, or when a
    # verb follows it ("Alice owns ..."); _name_candidates marks the latter as later.
    confirmed = [f for f in initial if f[1].lower() in later_keys or counts[f[1].lower()] > 1]
    runs = later + confirmed
    # A technical name inside a longer name ("GitHub" in "GitHub Actions") is not its own.
    inside = {w.lower() for _, n in runs if " " in n for w in n.split()}
    tech = [f for f in _tech_names(sentences) if f[1].lower() not in inside]
    names: list[str] = []
    seen: set[str] = set()
    for _, name in sorted(runs + tech):
        if name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    relations = _relations(sentences)
    phrases = {n.lower() for r in relations for n in (r.source, r.target) if " " in n}
    mentions = [ExtractedEntity("user", "mentions", n, ENTITY_CONFIDENCE) for n in names
                if not any(n.lower() in p.split() for p in phrases)]
    return mentions + relations


def _name_candidates(
    sentences: list[str], lowercase: set[str]
) -> tuple[list[_Found], list[_Found]]:
    """Capitalised runs split by position: (starting the sentence, anywhere else). A run that
    starts the sentence and is followed by a verb counts as "anywhere else": "Alice owns"."""
    initial: list[_Found] = []
    later: list[_Found] = []
    for index, sentence in enumerate(sentences):
        if _is_heading(sentence):
            continue
        text = _FILLER.sub("", sentence)
        offset = len(sentence) - len(text)
        for match in _NAME_RUN.finditer(text):
            words = match.group(0).split()
            at_start = not text[: match.start()].strip()
            # Leading sentence words ("Contact Jonas Weber") are not part of the name.
            while words and (_common(words[0], lowercase) if at_start
                             else words[0].lower().replace("\u2019", "'") in _STARTERS):
                words, at_start = words[1:], False
            name = _clean_name(" ".join(words))
            if not name or all(_common(w, lowercase) for w in name.split()):
                continue
            found = ((index, offset + match.start()), name)
            if at_start and _verb_follows(text[match.end():]):
                at_start = False
            (initial if at_start else later).append(found)
    return initial, later


def _common(word: str, lowercase: set[str]) -> bool:
    low = word.lower().replace("\u2019", "'")
    return low in _COMMON or low in _CALENDAR or low.rstrip("s") in _CALENDAR or low in lowercase


def _verb_follows(rest: str) -> bool:
    following = _WORD.findall(rest[:40])
    if not following or not following[0].islower():
        return False
    word = following[0].replace("\u2019", "'")
    third_person = len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    return word in _VERBISH or word.endswith("ed") or third_person


def _is_heading(sentence: str) -> bool:
    """A markdown heading or a bare label line ("Decisions:"): its capitals are layout."""
    return sentence.startswith("#") or sentence.endswith(":")


def _clean_name(name: str) -> str:
    name = re.sub(r"['\u2019]s$", "", name).strip("-'\u2019 ")
    low = name.lower()
    if not name or low in _CALENDAR or low.rstrip("s") in _CALENDAR or low in _STARTERS:
        return ""
    return name


def _tech_names(sentences: list[str]) -> list[_Found]:
    names: list[_Found] = []
    for index, sentence in enumerate(sentences):
        for match in _WORD.finditer(sentence):
            word = re.sub(r"['\u2019]s$", "", match.group(0))
            if _CAMEL.match(word) or (_ALLCAPS.match(word) and word not in _NOT_TECH):
                names.append(((index, match.start()), word))
    return names


# -- relations stated plainly -----------------------------------------------------------------

_RELATION = re.compile(
    r"\b(?:(uses|use)|(owns|own)|(maintains|maintain)|(?:is|are) (written in)|(runs on|run on)"
    r"|(depends on|depend on))\s+"
)
_RELATION_NAMES = ("uses", "owns", "maintains", "is written in", "runs on", "depends on")
_DETERMINER = frozenset("the our my a an their his her its this that".split())
_SPEAKER = {"i": "user", "we": "user"}
_NP_WORD = re.compile(rf"[{_LETTER}0-9][{_LETTER}0-9.+#'\u2019-]*")
_NP_STOP = _STARTERS | frozenset(
    "to of now too only also all both via into onto over under about".split()
)
MAX_PHRASE_WORDS = 3


def _relations(sentences: list[str]) -> list[ExtractedEntity]:
    """(X, uses|owns|maintains|is written in|runs on|depends on, Y) where a sentence says so
    in those words, X and Y each a name or a short noun phrase ("the billing service");
    "I"/"we" are the user. "X uses Y and owns Z" gives both."""
    out: list[ExtractedEntity] = []
    seen: set[tuple[str, str, str]] = set()
    for sentence in sentences:
        if _is_heading(sentence) or sentence.endswith("?"):
            continue
        subject: str | None = None
        for match in _RELATION.finditer(sentence):
            verb = next(i for i, g in enumerate(match.groups()) if g)
            before = _phrase_before(sentence[: match.start()])
            if before is None and subject is not None and re.search(
                r"\band\s*$", sentence[: match.start()]
            ):
                before = subject
            target = _phrase_after(sentence[match.end():])
            if before is None or target is None:
                subject = None
                continue
            subject = before
            relation = (before, _RELATION_NAMES[verb], target)
            if relation[0].lower() != relation[2].lower() and relation not in seen:
                seen.add(relation)
                out.append(ExtractedEntity(*relation, ENTITY_CONFIDENCE))
    return out


def _phrase_before(text: str) -> str | None:
    tail = re.split(r"[,;:()]", text)[-1]
    words = _NP_WORD.findall(tail)
    phrase: list[str] = []
    for word in reversed(words):
        low = word.lower()
        if low in _SPEAKER and not phrase:
            return _SPEAKER[low]
        if low in _DETERMINER or low in _NP_STOP or len(phrase) == MAX_PHRASE_WORDS:
            break
        phrase.insert(0, word)
    if len(phrase) == len(words) or (words and words[len(words) - len(phrase) - 1].lower()
                                     in _DETERMINER):
        return _noun_phrase(phrase)
    return _noun_phrase(phrase) if phrase and phrase[0][0].isupper() else None


def _phrase_after(text: str) -> str | None:
    words = _NP_WORD.findall(re.split(r"[,;:()!?]|\.(?:\s|$)", text)[0])
    while words and words[0].lower() in _DETERMINER:
        words = words[1:]
    phrase: list[str] = []
    for word in words:
        if word.lower() in _NP_STOP or word.lower() in _DETERMINER:
            break
        phrase.append(word)
    if len(phrase) > MAX_PHRASE_WORDS:
        return None
    return _noun_phrase(phrase)


def _noun_phrase(words: list[str]) -> str | None:
    if not words or all(w.lower() in _COMMON for w in words):
        return None
    if any(w.lower() in _FINITE for w in words):
        return None
    return " ".join(words)
