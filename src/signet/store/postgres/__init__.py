"""The PostgreSQL store backend (`store.backend: postgres`), on psycopg 3. Several daemons share one
database, so what SQLite got from its single writer is spelled out in SQL: unique partial indexes
for dedup and enqueueing, `FOR UPDATE SKIP LOCKED` leases, advisory-locked migrations, and scope
in every scoped read's WHERE clause. Needs the `postgres` extra; nothing else imports psycopg.
"""
