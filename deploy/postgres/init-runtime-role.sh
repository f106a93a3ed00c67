#!/bin/sh
# Creates the role the approval service runs as (POSTGRES_APP_USER). It owns nothing: the
# migration, run by the owner (POSTGRES_USER), grants it INSERT/SELECT on the audit events and
# SELECT/INSERT/UPDATE on the job rows, nothing more. Runs once, on an empty data volume.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
	-v app_user="$POSTGRES_APP_USER" -v app_password="$POSTGRES_APP_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'app_user', :'app_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'app_user') \gexec
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'app_user') \gexec
SQL
