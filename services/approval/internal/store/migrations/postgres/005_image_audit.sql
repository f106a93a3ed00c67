-- Image audit log: one row per picture sent to a model (SPEC §10 Images), append-only like
-- approval_events. The bytes are not here: approval keeps them in files only with images.keep.
CREATE TABLE IF NOT EXISTS approval_images (
    id          bigserial   PRIMARY KEY,
    job_id      text        NOT NULL,
    session_id  text        NOT NULL DEFAULT '',
    sha256      text        NOT NULL CHECK (length(sha256) = 64),
    size_bytes  bigint      NOT NULL CHECK (size_bytes > 0),
    mime_type   text        NOT NULL,
    provider    text        NOT NULL,
    model       text        NOT NULL,
    kept        boolean     NOT NULL DEFAULT false,
    recorded_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS approval_images_job ON approval_images (job_id);
CREATE INDEX IF NOT EXISTS approval_images_time ON approval_images (recorded_at);

CREATE OR REPLACE FUNCTION approval_images_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'approval_images is append-only';
END;
$$;

CREATE TRIGGER approval_images_no_update BEFORE UPDATE OR DELETE ON approval_images
    FOR EACH ROW EXECUTE FUNCTION approval_images_append_only();
CREATE TRIGGER approval_images_no_truncate BEFORE TRUNCATE ON approval_images
    FOR EACH STATEMENT EXECUTE FUNCTION approval_images_append_only();
