"""Document ingest: a text, file or URL becomes a document row,
then `document_chunk` memories through the durable queue.

- service.py registers documents (dedup by source and content hash) and reads, lists and
  deletes them within a caller's scope;
- worker.py is the `document_ingest` worker: extracting -> chunking -> embedding -> indexing ->
  done, each status change its own short transaction, the whole chunk set written in one;
- extract.py turns bytes into text (markdown, plain text, HTML through a readability-style
  extractor, PDF through pypdf); chunking.py cuts text on paragraph and sentence boundaries;
- fetch.py fetches a URL (opt-in) and refuses server-side request forgery.
"""
