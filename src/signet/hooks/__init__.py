"""The harness hooks adapter: `signet hook <event> --harness <name>`.

A short-lived process the harness starts with a JSON payload on stdin; what it prints goes into the
agent's context. It posts the payload to `/api/hooks/*` over a plain socket and prints what that
harness reads, importing no store, model or HTTP library so it starts fast, and it fails open
(runner.py). Adding a harness: one entry in payloads.py and formats.py, recorded payloads in the
tests.
"""
