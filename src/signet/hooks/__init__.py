"""The harness hooks adapter: `signet hook <event> --harness <name>`.

A hook is a short-lived process the harness starts at a lifecycle point (session start, each
prompt, before compaction, session end) with a JSON payload on stdin; what it prints on stdout
goes into the agent's context. This package is a thin client of the daemon: it turns the
harness's payload into a hook request (payloads.py), posts it to the daemon's `/api/hooks/*`
over a plain socket (transport.py), and prints exactly what that harness
consumes (formats.py). It never imports the store, the model, numpy or an HTTP library, so the process
starts fast, and it fails open (runner.py): whatever goes wrong, the harness gets empty output,
exit code 0 and one line in `<workspace>/.daemon/logs/hooks.log`.

Adding a harness means one entry in payloads.py and formats.py, plus recorded payloads in the
tests.
"""
