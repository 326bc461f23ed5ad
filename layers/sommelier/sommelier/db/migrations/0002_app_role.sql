-- The run-time database role: least privilege (docs/deploy.md, "1. Architecture").
--
-- `sommelier_app` is a NOLOGIN group role with data rights only: SELECT, INSERT, UPDATE and DELETE
-- on the application tables and USAGE on their sequences. No DDL: it owns nothing and may not
-- create objects in schema public, so a compromised or buggy tool function can't CREATE, ALTER,
-- DROP or TRUNCATE anything. The tool function logs in as a LOGIN user that is a member of this
-- role (`sommelier_app_user` in AWS; created by the migrate function from the AppDatabaseSecret,
-- see sommelier.db.roles). Migrations keep running as the master user, who owns the tables.
--
-- Roles are cluster-wide: creating one is guarded, so re-running this file (or migrating a second
-- database on the same server) is harmless.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sommelier_app') THEN
        CREATE ROLE sommelier_app NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;  -- created concurrently by another database's migration
END
$$;

-- Nobody but the owner creates objects in public (already the default since PostgreSQL 15).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO sommelier_app;

GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE wines, users, messages, feedback TO sommelier_app;
GRANT USAGE, SELECT ON SEQUENCE messages_id_seq, feedback_id_seq TO sommelier_app;

-- Tables and sequences that later migrations create (as the same migrating user) get the same data
-- rights; the migration bookkeeping table stays out of reach.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sommelier_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO sommelier_app;
REVOKE ALL ON TABLE schema_migrations FROM sommelier_app;
