"""Sessions and their lineage as a service for the adapters: importing transcripts, browsing and
searching sessions, the transcript excerpts recall's `expand` returns, summaries, thread heads
and MEMORY.md (see service.py and importer.py)."""
