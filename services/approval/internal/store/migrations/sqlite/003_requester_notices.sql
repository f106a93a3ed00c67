-- Requester notices (see the Postgres migration of the same number); times are Unix microseconds.
CREATE TABLE IF NOT EXISTS approval_notices (
    job_id       TEXT    PRIMARY KEY,
    session_id   TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    trace_parent TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    next_at      INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    done_at      INTEGER,
    outcome      TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX IF NOT EXISTS approval_notices_due ON approval_notices (next_at) WHERE done_at IS NULL;
