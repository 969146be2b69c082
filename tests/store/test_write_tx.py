"""The writer's transaction on a real SQLite file when things go wrong: the caller sees the
original error (a full disk, a failed COMMIT), never a follow-on "no transaction is active",
and the writer is usable again afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.store.connection import DatabaseError
from signet.store.db import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "memories.db")
    yield opened
    opened.close()


def _make_scratch_table(store: Store) -> None:
    with store.write_tx() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, body BLOB)")


def test_a_full_disk_reports_the_full_disk_and_the_writer_recovers(store: Store) -> None:
    _make_scratch_table(store)
    with store.write_tx() as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(DatabaseError) as caught, store.write_tx() as conn:
        for _ in range(50):
            conn.execute("INSERT INTO scratch (body) VALUES (zeroblob(65536))")
    assert "full" in str(caught.value)
    assert "no transaction" not in str(caught.value)
    with store.write_tx() as conn:
        conn.execute("PRAGMA max_page_count = 1073741823")
        conn.execute("INSERT INTO scratch (body) VALUES (x'00')")
    count = store.reader().execute("SELECT COUNT(*) FROM scratch").fetchone()[0]
    assert count == 1


def test_a_failed_commit_leaves_no_transaction_open(store: Store) -> None:
    with store.write_tx() as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS child (id INTEGER PRIMARY KEY, parent_id INTEGER "
            "REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)"
        )
    # A deferred foreign key is checked at COMMIT, which then fails with the transaction open.
    with pytest.raises(DatabaseError, match="FOREIGN KEY"), store.write_tx() as conn:
        conn.execute("INSERT INTO child (parent_id) VALUES (42)")
    assert not store.in_write_tx
    with store.write_tx() as conn:
        conn.execute("INSERT INTO parent (id) VALUES (1)")
    reader = store.reader()
    assert reader.execute("SELECT COUNT(*) FROM child").fetchone()[0] == 0
    assert reader.execute("SELECT COUNT(*) FROM parent").fetchone()[0] == 1


def test_a_failed_savepoint_undoes_only_its_own_writes_and_reraises_the_error(
    store: Store,
) -> None:
    _make_scratch_table(store)

    class Refused(Exception):
        pass

    with store.write_tx() as conn:
        conn.execute("INSERT INTO scratch (body) VALUES (x'01')")
        with pytest.raises(Refused), store.write_tx() as inner:
            inner.execute("INSERT INTO scratch (body) VALUES (x'02')")
            raise Refused("the caller's own error, unchanged")
        assert store.in_write_tx  # the outer transaction is still open and usable
        conn.execute("INSERT INTO scratch (body) VALUES (x'03')")
    bodies = [r[0] for r in store.reader().execute("SELECT body FROM scratch ORDER BY id")]
    assert bodies == [b"\x01", b"\x03"]


def test_an_error_outside_any_open_transaction_is_reported_as_is(store: Store) -> None:
    # The first statement fails before anything is written; the caller sees its own error
    # (not "no transaction is active" from a rollback with nothing to undo) and the writer
    # stays usable.
    with pytest.raises(DatabaseError, match="no such table"), store.write_tx() as conn:
        conn.execute("COMMIT")  # ends the transaction early: nothing left for _undo to roll back
        conn.execute("INSERT INTO missing_table VALUES (1)")
    assert not store.in_write_tx
    _make_scratch_table(store)
    with store.write_tx() as conn:
        conn.execute("INSERT INTO scratch (body) VALUES (x'00')")
    assert store.reader().execute("SELECT COUNT(*) FROM scratch").fetchone()[0] == 1
