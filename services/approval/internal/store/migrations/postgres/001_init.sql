-- Approval audit log (append-only events with a per-job hash chain) and its read model.
CREATE TABLE IF NOT EXISTS approval_events (
    id            bigserial   PRIMARY KEY,
    job_id        text        NOT NULL,
    seq           bigint      NOT NULL CHECK (seq > 0),
    type          text        NOT NULL,
    actor_id      text        NOT NULL DEFAULT '',
    actor_channel text        NOT NULL DEFAULT '',
    actor_name    text        NOT NULL DEFAULT '',
    channel       text        NOT NULL DEFAULT '',
    payload       json        NOT NULL,
    policy_rule   text        NOT NULL DEFAULT '',
    prev_hash     text        NOT NULL,
    hash          text        NOT NULL,
    created_at    timestamptz NOT NULL,
    UNIQUE (job_id, seq)
);

CREATE OR REPLACE FUNCTION approval_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'approval_events is append-only';
END;
$$;

CREATE TRIGGER approval_events_no_update BEFORE UPDATE OR DELETE ON approval_events
    FOR EACH ROW EXECUTE FUNCTION approval_events_append_only();
CREATE TRIGGER approval_events_no_truncate BEFORE TRUNCATE ON approval_events
    FOR EACH STATEMENT EXECUTE FUNCTION approval_events_append_only();

CREATE TABLE IF NOT EXISTS approval_jobs (
    job_id        text        PRIMARY KEY,
    status        text        NOT NULL,
    session_id    text        NOT NULL DEFAULT '',
    channel       text        NOT NULL DEFAULT '',
    route         text        NOT NULL DEFAULT '',
    task_type     text        NOT NULL DEFAULT '',
    plan          text        NOT NULL DEFAULT '',
    patch         text        NOT NULL,
    content_hash  text        NOT NULL,
    risk          json        NOT NULL,
    cost          json        NOT NULL,
    uses_browser  boolean     NOT NULL,
    auto_approved boolean     NOT NULL,
    policy_rule   text        NOT NULL DEFAULT '',
    approver      text        NOT NULL DEFAULT '',
    requested_at  timestamptz NOT NULL,
    decided_at    timestamptz,
    expires_at    timestamptz,
    executed_at   timestamptz,
    finished_at   timestamptz,
    result        json,
    version       bigint      NOT NULL,
    last_hash     text        NOT NULL,
    data          json        NOT NULL
);

CREATE INDEX IF NOT EXISTS approval_jobs_status_expires ON approval_jobs (status, expires_at);
CREATE INDEX IF NOT EXISTS approval_jobs_session ON approval_jobs (session_id);
CREATE INDEX IF NOT EXISTS approval_jobs_requested ON approval_jobs (requested_at DESC, job_id DESC);
