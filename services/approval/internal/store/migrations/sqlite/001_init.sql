-- Approval audit log (append-only events with a per-job hash chain) and its read model.
-- Times are unix microseconds (UTC).
CREATE TABLE IF NOT EXISTS approval_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id        TEXT    NOT NULL,
    seq           INTEGER NOT NULL CHECK (seq > 0),
    type          TEXT    NOT NULL,
    actor_id      TEXT    NOT NULL DEFAULT '',
    actor_channel TEXT    NOT NULL DEFAULT '',
    actor_name    TEXT    NOT NULL DEFAULT '',
    channel       TEXT    NOT NULL DEFAULT '',
    payload       TEXT    NOT NULL,
    policy_rule   TEXT    NOT NULL DEFAULT '',
    prev_hash     TEXT    NOT NULL,
    hash          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (job_id, seq)
);

CREATE TRIGGER IF NOT EXISTS approval_events_no_update BEFORE UPDATE ON approval_events
BEGIN
    SELECT RAISE(ABORT, 'approval_events is append-only');
END;

CREATE TRIGGER IF NOT EXISTS approval_events_no_delete BEFORE DELETE ON approval_events
BEGIN
    SELECT RAISE(ABORT, 'approval_events is append-only');
END;

CREATE TABLE IF NOT EXISTS approval_jobs (
    job_id        TEXT    PRIMARY KEY,
    status        TEXT    NOT NULL,
    session_id    TEXT    NOT NULL DEFAULT '',
    channel       TEXT    NOT NULL DEFAULT '',
    route         TEXT    NOT NULL DEFAULT '',
    task_type     TEXT    NOT NULL DEFAULT '',
    plan          TEXT    NOT NULL DEFAULT '',
    patch         TEXT    NOT NULL,
    content_hash  TEXT    NOT NULL,
    risk          TEXT    NOT NULL,
    cost          TEXT    NOT NULL,
    uses_browser  INTEGER NOT NULL,
    auto_approved INTEGER NOT NULL,
    policy_rule   TEXT    NOT NULL DEFAULT '',
    approver      TEXT    NOT NULL DEFAULT '',
    requested_at  INTEGER NOT NULL,
    decided_at    INTEGER,
    expires_at    INTEGER,
    executed_at   INTEGER,
    finished_at   INTEGER,
    result        TEXT,
    version       INTEGER NOT NULL,
    last_hash     TEXT    NOT NULL,
    data          TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS approval_jobs_status_expires ON approval_jobs (status, expires_at);
CREATE INDEX IF NOT EXISTS approval_jobs_session ON approval_jobs (session_id);
CREATE INDEX IF NOT EXISTS approval_jobs_requested ON approval_jobs (requested_at DESC, job_id DESC);
