"""The harness hooks adapter: `signet hook <event> --harness <name>`.

A hook is a short-lived process the harness starts with a JSON payload on stdin; what it prints goes
into the agent's context. It turns the payload into a hook request (payloads.py), posts it to
`/api/hooks/*` over a plain socket (transport.py) and prints what that harness reads (formats.py).
It imports no store, model, numpy or HTTP library, so it starts fast, and it fails open (runner.py):
empty output, exit 0 and a line in `.daemon/logs/hooks.log`. Adding a harness is one entry in
payloads.py and formats.py plus recorded payloads in the tests.
"""
