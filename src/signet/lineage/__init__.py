"""The lineage: transcripts, session summaries, arcs and
epochs, and the global head (MEMORY.md), as pure functions over text and files.

Nothing here holds SQL or calls a provider; the services (signet/sessions) and the workers
(signet/workers/summary_worker.py) put these pieces together with the store.
"""
