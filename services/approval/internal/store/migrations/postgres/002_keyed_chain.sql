-- The chain is keyed from here on: each event names the HMAC key that sealed it. Events already
-- in the log keep their unkeyed sha256; the boundary row records the last of them, so an event
-- without a key id written later is reported instead of accepted.
ALTER TABLE approval_events ADD COLUMN IF NOT EXISTS key_id text NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS approval_audit_legacy (
    max_event_id bigint NOT NULL
);
INSERT INTO approval_audit_legacy (max_event_id) SELECT COALESCE(max(id), 0) FROM approval_events;
