"""The PostgreSQL store backend (store.backend: postgres): the core operations on psycopg 3.

Several daemons share one database here, so what SQLite got from its single writer is spelled
out in SQL: unique partial indexes make dedup and job enqueueing race-free, the job lease is
`FOR UPDATE SKIP LOCKED`, migrations run under an advisory lock, and every read that a scoped
caller makes carries its scope in the WHERE clause. Needs the `postgres` extra
(`pip install 'signet-memory[postgres]'`); nothing else in Signet imports psycopg.
"""
