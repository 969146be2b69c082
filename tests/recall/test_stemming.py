"""The lexical channel matches word forms through the Porter-stemmed index (migration 005)."""

from __future__ import annotations

from signet.app import SignetApp
from signet.config import Config
from signet.store import fts
from signet.types import MemoryFilters, RecallQuery


def _ids(app: SignetApp, text: str) -> list[str]:
    app.recaller = app.recaller.respec(context_weight=0.0)  # the channel alone, without conversation context
    return [h.memory.id for h in app.recall(RecallQuery(text, mode="keyword", touch=False)).hits]


def test_inflected_query_finds_other_word_form(lexical_app: SignetApp) -> None:
    painted = lexical_app.remember("Melanie painted a lake sunrise last year").id
    lexical_app.remember("The kettle is in the kitchen")
    assert _ids(lexical_app, "paintings of sunrises") == [painted]


def test_exact_table_still_matches_exact_words_only(sqlite_lexical_app: SignetApp) -> None:
    lexical_app = sqlite_lexical_app  # SQLite's two FTS5 tables
    lexical_app.remember("Melanie painted a lake sunrise last year")
    conn = lexical_app.store.reader()
    exact = fts.search(conn, "paintings", MemoryFilters(), 10, table=fts.EXACT_TABLE)
    stemmed = fts.search(conn, "paintings", MemoryFilters(), 10, table=fts.STEMMED_TABLE)
    assert exact == [] and len(stemmed) == 1


def test_stemmed_index_follows_updates_and_deletes(sqlite_lexical_app: SignetApp) -> None:
    lexical_app = sqlite_lexical_app  # SQLite's FTS5 integrity check
    memory = lexical_app.remember("We are running the migration tonight").id
    lexical_app.modify(memory, {"content": "We walked the dog tonight"})
    assert _ids(lexical_app, "runs") == []
    assert _ids(lexical_app, "walking") == [memory]
    with lexical_app.store.write_tx() as conn:
        conn.execute("DELETE FROM memories WHERE id = ?", (memory,))
        assert fts.integrity_check(conn)
    assert _ids(lexical_app, "walking") == []


def test_migration_indexes_rows_written_before_it(config: Config) -> None:
    with SignetApp.open(config, embedder=None) as app:
        memory = app.remember("Caroline researched adoption agencies").id
        with app.store.write_tx() as conn:
            # Back to the schema before 005, with a row already written.
            for trigger in ("memories_stem_ai", "memories_stem_ad", "memories_stem_au"):
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.execute("DROP TABLE memories_stem_fts")
            conn.execute("DELETE FROM schema_migrations WHERE version = 5")
    with SignetApp.open(config, embedder=None) as app:
        assert _ids(app, "research agency") == [memory]
        assert fts.integrity_check(app.store.reader())
