-- Named leases held by one replica at a time (the sweeper's): a replica holds a lease until
-- expires_at and renews it while it runs; once it runs out, the next replica takes it. Not part
-- of the audit log: a lease decides who does the work, never what is recorded.
CREATE TABLE IF NOT EXISTS approval_leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
