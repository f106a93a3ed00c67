-- Image audit log (see the Postgres migration of the same number); times are Unix microseconds.
CREATE TABLE IF NOT EXISTS approval_images (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      TEXT    NOT NULL,
    session_id  TEXT    NOT NULL DEFAULT '',
    sha256      TEXT    NOT NULL CHECK (length(sha256) = 64),
    size_bytes  INTEGER NOT NULL CHECK (size_bytes > 0),
    mime_type   TEXT    NOT NULL,
    provider    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    kept        INTEGER NOT NULL DEFAULT 0,
    recorded_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS approval_images_job ON approval_images (job_id);
CREATE INDEX IF NOT EXISTS approval_images_time ON approval_images (recorded_at);

CREATE TRIGGER IF NOT EXISTS approval_images_no_update BEFORE UPDATE ON approval_images
BEGIN
    SELECT RAISE(ABORT, 'approval_images is append-only');
END;

CREATE TRIGGER IF NOT EXISTS approval_images_no_delete BEFORE DELETE ON approval_images
BEGIN
    SELECT RAISE(ABORT, 'approval_images is append-only');
END;
