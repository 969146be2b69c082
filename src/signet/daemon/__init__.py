"""The daemon: the one process that owns the database, serves the HTTP API and runs the workers.
startup.py starts it, server.py builds the API, routes_* hold the thin routes (shapes in
schemas.py, documented in docs/api.md), and lifecycle.py finds, starts and stops it.
"""
