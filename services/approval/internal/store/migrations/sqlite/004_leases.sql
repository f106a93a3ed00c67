-- Named leases held by one replica at a time (the sweeper's); times are unix microseconds (UTC).
-- See the Postgres migration of the same number.
CREATE TABLE IF NOT EXISTS approval_leases (
    name       TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
);
