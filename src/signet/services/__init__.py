"""Services: the policy between the adapters and the store, each over the store and providers
it is handed by the composition root (app.py). `memory.py` is the one write path of a memory
and its reads, edits and feedback; `memory_input.py` validates what callers send; `scope.py`
is what a scoped token may see; `idempotency.py` replays a retried remember;
`search_ledger.py` is the recall QA ledger; `providers.py` builds the configured embedder and
LLM (the one place API keys are read).
"""
