"""Document ingest: a text, file or URL becomes a document row, then `document_chunk` memories
through the durable queue. service.py registers, reads and deletes documents within a caller's
scope; worker.py runs the ingest; extract.py turns bytes into text; chunking.py cuts it; fetch.py
fetches a URL (opt-in) and refuses server-side request forgery.
"""
