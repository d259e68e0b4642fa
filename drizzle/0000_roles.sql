-- Custom migration: the two NOLOGIN roles that policies name. drizzle-kit cannot create a role
-- only when it is missing, and roles are cluster-wide, so a second database on the same server
-- must find them already there. Provisioning (north provision) owns their attributes, the login
-- user, ownership and grants; this only makes sure the names exist.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'forma') THEN
    CREATE ROLE forma NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'app_role') THEN
    CREATE ROLE app_role NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  -- Another database on this server created them concurrently: they exist, which is the goal.
  NULL;
END
$$;
