"""Services: the policy between the adapters and the store, each over the seams the composition root
(app.py) hands it. `memory.py` is the one write path of a memory; `providers.py` builds the
configured embedder and LLM, the one place API keys are read.
"""
