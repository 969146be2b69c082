"""Migrations: from empty, re-run is a no-op, a tampered migration and a newer schema are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from signet.errors import MigrationTampered, SchemaTooNew
from signet.store import migrate
from signet.store.connection import connect
from signet.store.db import Store


def test_migrates_from_empty_and_records_checksum_and_duration(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    conn = store.reader()
    versions = [m.version for m in migrate.bundled_migrations()]
    rows = conn.execute("SELECT version, checksum FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == versions
    assert all(len(r[1]) == 64 for r in rows)
    audit = conn.execute("SELECT count(*), min(duration_ms) FROM schema_migrations_audit").fetchone()
    assert audit[0] == len(versions) and audit[1] >= 0
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()


def test_rerun_is_a_no_op(tmp_path: Path) -> None:
    Store.open(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    before = conn.execute("SELECT count(*) FROM schema_migrations_audit").fetchone()[0]
    assert migrate.migrate(conn) == []
    assert migrate.pending(conn) == []
    assert conn.execute("SELECT count(*) FROM schema_migrations_audit").fetchone()[0] == before


def test_a_migration_edited_after_it_landed_is_refused(tmp_path: Path) -> None:
    Store.open(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    tampered = [
        migrate.Migration(m.version, m.name, m.sql + "\n-- edited\n")
        if m.version == 1 else m
        for m in migrate.bundled_migrations()
    ]
    with pytest.raises(MigrationTampered, match="001_initial.sql changed"):
        migrate.migrate(conn, tampered)


def test_a_database_from_a_newer_signet_is_refused(tmp_path: Path) -> None:
    Store.open(tmp_path / "m.db").close()
    conn = connect(tmp_path / "m.db")
    conn.execute(
        "INSERT INTO schema_migrations(version, name, checksum, applied_at) "
        "VALUES (999, 'future', 'x', '2030-01-01')"
    )
    with pytest.raises(SchemaTooNew, match="999"):
        migrate.migrate(conn)


def test_a_failing_migration_rolls_back_entirely(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.db")
    broken = migrate.Migration(1, "broken", "CREATE TABLE a (x INT);\nCREATE TABLE a (x INT);\n")
    with pytest.raises(Exception, match="already exists"):
        migrate.migrate(conn, [broken])
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'a'").fetchone()[0] == 0
    assert migrate.applied(conn) == {}


def test_write_tx_nests_as_savepoints(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    with store.write_tx() as conn:
        conn.execute("CREATE TABLE t (x INT)")
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(RuntimeError):
            with store.write_tx() as inner:
                inner.execute("INSERT INTO t VALUES (2)")
                raise RuntimeError("inner fails")
        assert store.in_write_tx
    assert not store.in_write_tx
    assert [r[0] for r in store.reader().execute("SELECT x FROM t")] == [1]
    store.close()


UNWRITTEN_TABLES = {"conversations", "task_meta", "predictor_comparisons",
                    "predictor_training_pairs"}


def test_schema_no_code_writes_is_gone(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    try:
        conn = store.reader()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert not UNWRITTEN_TABLES & tables
        assert "embedding" not in {r[1] for r in conn.execute("PRAGMA table_info(entities)")}
    finally:
        store.close()


def test_schema_no_code_writes_is_gone_on_postgres(pg_url: str) -> None:
    import psycopg

    from signet.store.postgres.migrate import migrate as pg_migrate

    with psycopg.connect(pg_url, autocommit=True) as conn:
        pg_migrate(conn)
        names = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
        columns = {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'entities'")}
    assert "entities" in names and not UNWRITTEN_TABLES & names
    assert "embedding" not in columns
