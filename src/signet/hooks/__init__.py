"""The harness hooks adapter: `signet hook <event> --harness <name>`.

A short-lived process the harness starts with a JSON payload on stdin; what it prints goes into the
agent's context. It turns the payload into a hook request (payloads.py), posts it to `/api/hooks/*`
over a plain socket (transport.py) and prints what that harness reads (formats.py), importing no
store, model or HTTP library so it starts fast. It fails open (runner.py). Adding a harness is one
entry in payloads.py and formats.py plus recorded payloads in the tests.
"""
