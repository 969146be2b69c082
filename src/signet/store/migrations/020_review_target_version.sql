-- 020: the version of the memory a review item was made for. Approving applies the parked
-- change only while the memory is still at that version; an update since then (by anyone) makes
-- the approval a conflict instead of silently overwriting the newer text. Items parked before
-- this migration have NULL here and are checked against their old_content instead.
ALTER TABLE memory_review_queue ADD COLUMN target_version INTEGER;
