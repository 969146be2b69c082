"""SQL for the knowledge graph's write side: entities (unique per agent by `canonical_name`),
relations and memory-entity mentions. `entities.mentions` grows only with a new link, so re-
extraction does not inflate it. `link_known_entities` is the write path's inline linker: it links
a memory to existing entities whose names its content holds, and never creates one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from signet.store.connection import Connection
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.memories import new_id

MAX_CANDIDATES = 200
MAX_RUN_WORDS = 4
INLINE_LINK_CONFIDENCE = 0.5

_CAP_WORD = r"[A-Z][\w'\u2019&.-]*"
_NAME_RUN = re.compile(rf"{_CAP_WORD}(?:\s+(?:(?:of|de|van|von|la|le|the)\s+)?{_CAP_WORD})*")
_JOINING = frozenset("'\u2019\u2018.\u00b7")
_KEPT = frozenset("+#&@")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_TECH = re.compile(r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[A-Z0-9]*)\b")


@dataclass(frozen=True, slots=True)
class EntityRow:
    id: str
    name: str
    canonical_name: str
    mentions: int
    agent_id: str


def canonical(name: str) -> str:
    """The lookup key of a name: NFKC, casefolded, punctuation normalised, spaces collapsed.

    A possessive 's is dropped ("Mustang's" = "Mustang"); apostrophes and dots join ("O'Brien" = "OBrien", "Node.js" = "NodeJS"); other punctuation
    separates ("Ford-Mustang" = "ford mustang"); + # & @ stay, so C++, C# and AT&T keep apart.
    """
    text = _POSSESSIVE.sub("", unicodedata.normalize("NFKC", name).casefold())
    kept = []
    for char in text:
        if char in _JOINING:
            continue
        if char not in _KEPT and unicodedata.category(char).startswith("P"):
            kept.append(" ")
        else:
            kept.append(char)
    return " ".join("".join(kept).split())


def upsert_entity(
    conn: Executes, name: str, *, agent_id: str, now: str, entity_type: str = "unknown",
    dialect: Dialect = SQLITE,
) -> str:
    """The id of the agent's entity called `name` (any case), created when missing."""
    row = conn.execute(dialect.sql(
        "INSERT INTO entities (id, name, entity_type, canonical_name, mentions, agent_id,"
        " created_at, updated_at) VALUES (?,?,?,?,0,?,?,?)"
        " ON CONFLICT(canonical_name, agent_id) DO UPDATE SET updated_at = excluded.updated_at"
        " RETURNING id"),
        (new_id(), " ".join(name.split()), entity_type, canonical(name), agent_id, now, now),
    ).fetchone()
    return str(row[0])


def upsert_relation(
    conn: Executes, source_id: str, target_id: str, relation_type: str, *,
    confidence: float, now: str, dialect: Dialect = SQLITE,
) -> str:
    """Create the (source, target, type) edge, or count one more mention of it."""
    row = conn.execute(dialect.sql(
        "INSERT INTO relations AS r (id, source_entity_id, target_entity_id, relation_type,"
        " mentions, confidence, created_at, updated_at) VALUES (?,?,?,?,1,?,?,?)"
        " ON CONFLICT(source_entity_id, target_entity_id, relation_type) DO UPDATE SET"
        f" mentions = r.mentions + 1, confidence = {dialect.greatest('r.confidence', 'excluded.confidence')},"
        " updated_at = excluded.updated_at RETURNING id"),
        (new_id(), source_id, target_id, relation_type.strip().lower(), confidence, now, now),
    ).fetchone()
    return str(row[0])


def link_mention(
    conn: Executes, memory_id: str, entity_id: str, *, mention_text: str | None,
    confidence: float | None, now: str, dialect: Dialect = SQLITE,
) -> bool:
    """Link a memory to an entity; True when the link is new (and the entity's count grew)."""
    cursor = conn.execute(dialect.sql(
        "INSERT INTO memory_entity_mentions (memory_id, entity_id, mention_text, confidence,"
        " created_at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING"),
        (memory_id, entity_id, mention_text, confidence, now),
    )
    if cursor.rowcount != 1:
        return False
    conn.execute(
        dialect.sql("UPDATE entities SET mentions = mentions + 1 WHERE id = ?"), (entity_id,))
    return True


def candidate_names(content: str) -> dict[str, str]:
    """Candidate proper nouns: canonical name -> the text as written (see the module doc)."""
    found: dict[str, str] = {}
    for match in _NAME_RUN.finditer(content):
        words = [w.strip(".'\u2019") for w in match.group(0).split()]
        for size in range(min(len(words), MAX_RUN_WORDS), 0, -1):
            for start in range(len(words) - size + 1):
                surface = " ".join(words[start : start + size])
                if surface:
                    found.setdefault(canonical(surface), surface)
    for match in _TECH.finditer(content):
        found.setdefault(canonical(match.group(0)), match.group(0))
    return dict(list(found.items())[:MAX_CANDIDATES])


def link_known_entities(
    conn: Connection, memory_id: str, agent_id: str, content: str, now: str
) -> int:
    """Inline linking at write time: link `memory_id` to existing entities it names."""
    names = candidate_names(content)
    if not names:
        return 0
    marks = ",".join("?" * len(names))
    rows = conn.execute(
        f"SELECT id, canonical_name FROM entities WHERE agent_id = ? AND canonical_name IN ({marks})",
        (agent_id, *names),
    ).fetchall()
    linked = 0
    for row in rows:
        linked += link_mention(
            conn, memory_id, row["id"], mention_text=names[row["canonical_name"]],
            confidence=INLINE_LINK_CONFIDENCE, now=now,
        )
    return linked


def unlink_memory(conn: Executes, memory_id: str, *, dialect: Dialect = SQLITE) -> int:
    """Drop every mention link of `memory_id` (its text changed, so what it names may have);
    each entity it named counts one mention less. Returns the links dropped."""
    conn.execute(dialect.sql(
        f"UPDATE entities SET mentions = {dialect.greatest('mentions - 1', '0')} WHERE id IN"
        " (SELECT entity_id FROM memory_entity_mentions WHERE memory_id = ?)"),
        (memory_id,),
    )
    cursor = conn.execute(
        dialect.sql("DELETE FROM memory_entity_mentions WHERE memory_id = ?"), (memory_id,))
    return cursor.rowcount


def entities_of_memory(
    conn: Executes, memory_id: str, *, dialect: Dialect = SQLITE
) -> list[EntityRow]:
    rows = conn.execute(dialect.sql(
        "SELECT e.id, e.name, e.canonical_name, e.mentions, e.agent_id FROM entities e"
        " JOIN memory_entity_mentions m ON m.entity_id = e.id WHERE m.memory_id = ?"
        " ORDER BY e.canonical_name"),
        (memory_id,),
    ).fetchall()
    return [EntityRow(r[0], r[1], r[2], int(r[3]), r[4]) for r in rows]
