-- 063_lexical_log_deletes: the lexical index (store/lexical_index.py) holds each row's memory id
-- and whether it is deleted beside its postings, so a keyword search drops deleted memories and
-- names the rest without a lookup per ranked row. A soft delete or a recovery changes only
-- `is_deleted`, which 057's triggers do not log: this one does, inside the writing
-- transaction, with the same trim.
CREATE TRIGGER IF NOT EXISTS lexical_log_deleted AFTER UPDATE OF is_deleted ON memories
WHEN old.is_deleted IS NOT new.is_deleted BEGIN
    INSERT INTO lexical_log(row) VALUES (new.rowid);
    DELETE FROM lexical_log WHERE seq <= last_insert_rowid() - 50000;
END;
