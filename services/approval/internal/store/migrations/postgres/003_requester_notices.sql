-- Requester notices: a job decided outside its requester's chat (another chat, the REST API, the
-- console) or expired owes that chat one message. The row is written in the transaction that
-- records the decision; the dispatcher claims it (next_at moves past the attempt), pushes it with
-- the job's retry key and marks it done, so a notice survives a crash and is delivered once.
-- trace_parent is the job's trace context: the delivery joins the job's trace.
CREATE TABLE IF NOT EXISTS approval_notices (
    job_id       text        PRIMARY KEY,
    session_id   text        NOT NULL,
    status       text        NOT NULL,
    trace_parent text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    next_at      timestamptz NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0,
    done_at      timestamptz,
    outcome      text        NOT NULL DEFAULT ''
);

CREATE INDEX IF NOT EXISTS approval_notices_due ON approval_notices (next_at) WHERE done_at IS NULL;
