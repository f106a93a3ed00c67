-- The chain is keyed from here on: each event names the HMAC key that sealed it. Events already
-- in the log keep their unkeyed sha256; the boundary row records the last of them, so an event
-- without a key id written later is reported instead of accepted.
ALTER TABLE approval_events ADD COLUMN key_id TEXT NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS approval_audit_legacy (
    max_event_id INTEGER NOT NULL
);
INSERT INTO approval_audit_legacy (max_event_id) SELECT COALESCE(max(id), 0) FROM approval_events;

CREATE TRIGGER IF NOT EXISTS approval_audit_legacy_no_update BEFORE UPDATE ON approval_audit_legacy
BEGIN
    SELECT RAISE(ABORT, 'approval_audit_legacy is fixed');
END;
