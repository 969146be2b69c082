-- 059_document_source_url: a local file has one document in its slice, whoever registered it
-- (`signet ingest` keys it `file:<path>`, a folder connector `connector:<id>:<path>`), so
-- registration also finds a file's document by its path; this index keeps that a lookup.
CREATE INDEX IF NOT EXISTS idx_documents_source_url ON documents(source_url);
