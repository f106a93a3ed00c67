-- What the services' own role may do, applied by the owner after every migration. The role may
-- add events and read them, and read and update the read model; it can never change or remove
-- an event, and it owns nothing, so it cannot disable the append-only triggers or drop a table.
-- {{schema}} and {{role}} are replaced by quoted identifiers.
GRANT USAGE ON SCHEMA {{schema}} TO {{role}};
REVOKE ALL ON approval_events FROM {{role}};
GRANT SELECT, INSERT ON approval_events TO {{role}};
REVOKE ALL ON SEQUENCE approval_events_id_seq FROM {{role}};
GRANT USAGE, SELECT ON SEQUENCE approval_events_id_seq TO {{role}};
REVOKE ALL ON approval_jobs FROM {{role}};
GRANT SELECT, INSERT, UPDATE ON approval_jobs TO {{role}};
REVOKE ALL ON approval_schema_migrations, approval_audit_legacy FROM {{role}};
GRANT SELECT ON approval_schema_migrations, approval_audit_legacy TO {{role}};
REVOKE ALL ON approval_notices FROM {{role}};
GRANT SELECT, INSERT, UPDATE ON approval_notices TO {{role}};
REVOKE ALL ON approval_leases FROM {{role}};
GRANT SELECT, INSERT, UPDATE, DELETE ON approval_leases TO {{role}};
REVOKE ALL ON approval_images FROM {{role}};
GRANT SELECT, INSERT ON approval_images TO {{role}};
REVOKE ALL ON SEQUENCE approval_images_id_seq FROM {{role}};
GRANT USAGE, SELECT ON SEQUENCE approval_images_id_seq TO {{role}};
