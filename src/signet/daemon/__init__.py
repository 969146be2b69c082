"""The daemon: the one process that owns the database, serves the HTTP API and runs the workers.

- `server`: `create_app(app)` (FastAPI around an opened SignetApp) and `run(config)`.
- `routes_*`: the routes, each a thin parse / one SignetApp call / format.
- `schemas`: request and response models (they make /openapi.json).
- `errors`, `middleware`: the edge (JSON errors, body limit, access log, request ids).
- `lifecycle`: pid file and lock, start (foreground or detached), stop, status, log files.
- `logfile`, `background`: the daily JSON log; the workers' thread.
"""
