import { getTableName } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import postgres from "postgres";
import {
  apiTokens,
  auditEvents,
  members,
  memories,
  organizations,
  workingProfileAnswers,
} from "./schema/index.ts";

export interface ProvisionOptions {
  /** The login role the app connects as at run time (`DB_APP_LOGIN_USER`). */
  loginUser: string;
  /** Its password (`DB_APP_LOGIN_PASSWORD`); left unchanged when omitted. */
  loginPassword?: string;
}

/**
 * What `app_role` may do on each table, and nothing more. Column lists keep an UPDATE from ever
 * rewriting a key: moving a row to another owner or organization is refused before RLS is asked.
 */
const TABLE_GRANTS: ReadonlyArray<{ table: PgTable; privileges: string }> = [
  { table: organizations, privileges: "SELECT" },
  { table: members, privileges: "SELECT" },
  {
    table: workingProfileAnswers,
    privileges: "SELECT, INSERT, UPDATE (question, answer, version, updated_at)",
  },
  { table: auditEvents, privileges: "INSERT" },
  {
    table: memories,
    // Forgetting blanks a memory in place; nothing else about a row ever changes.
    privileges: "SELECT, INSERT, UPDATE (body, subject_id, embedding, forgotten_at, forgotten_by)",
  },
  // Nothing: the app reads tokens only through resolve_api_token.
  { table: apiTokens, privileges: "" },
];

export const ADMIN_FUNCTION = "working_profile_answers_for_admin";

/**
 * The opening of every manager-only function: the requester must be the transaction's tenant
 * (so a caller cannot name someone else) and a manager of that organization; anything else
 * raises 42501. Relations are schema-qualified (see the search_path note below).
 */
const MANAGER_GUARD = `
  IF p_organization_id IS NULL OR p_requester_id IS NULL
     OR p_organization_id IS DISTINCT FROM nullif(current_setting('north.organization_id', true), '')::uuid
     OR p_requester_id IS DISTINCT FROM nullif(current_setting('north.user_id', true), '')::uuid THEN
    RAISE EXCEPTION 'requester does not match the transaction tenant' USING ERRCODE = '42501';
  END IF;
  IF NOT EXISTS (
    SELECT 1 FROM public.members m
    WHERE m.organization_id = p_organization_id
      AND m.user_id = p_requester_id
      AND m.role = 'manager'
  ) THEN
    RAISE EXCEPTION 'requester is not a manager of this organization' USING ERRCODE = '42501';
  END IF;`;

/**
 * Every member's working profile for a manager (SPEC §6).
 *
 * Owner bypass: this function is SECURITY DEFINER and owned by `forma`, which owns
 * `working_profile_answers` and `members`. Both tables have RLS enabled but not forced, so the
 * owner's reads skip the owner-only policy; that is the only reason this sees other members'
 * rows. Forcing RLS on those tables, or changing either owner, silently empties its result.
 * The schema's policy comment (schema/working-profile.ts) names the same dependency.
 *
 * Every relation is schema-qualified and `search_path` is pinned with `pg_temp` last, so a
 * temporary table named like one of ours changes nothing.
 */
const ADMIN_FUNCTION_SQL = `
CREATE FUNCTION public.${ADMIN_FUNCTION}(p_organization_id uuid, p_requester_id uuid)
RETURNS TABLE (
  owner_id uuid,
  owner_email text,
  question_id text,
  question text,
  answer text,
  version integer,
  created_at timestamptz,
  updated_at timestamptz
)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT a.owner_id, m.email, a.question_id, a.question, a.answer, a.version,
           a.created_at, a.updated_at
    FROM public.working_profile_answers a
    JOIN public.members m ON m.organization_id = a.organization_id AND m.user_id = a.owner_id
    WHERE a.organization_id = p_organization_id
    ORDER BY m.email, a.created_at, a.question_id;
END
$fn$`;

export const RESOLVE_TOKEN_FUNCTION = "resolve_api_token";

/**
 * The principal behind an API token hash, if the token is neither expired nor revoked and its
 * user is still a member. SECURITY DEFINER owned by `forma`: the app role has no privilege on
 * `api_tokens`, so this is its only way in, and it can only look up a hash it already holds.
 * `last_used_at` is written at most once a minute per token, so busy tokens do not turn every
 * request into a write.
 */
const RESOLVE_TOKEN_SQL = `
CREATE FUNCTION public.${RESOLVE_TOKEN_FUNCTION}(p_token_hash text)
RETURNS TABLE (token_id uuid, organization_id uuid, user_id uuid, role text, scopes text[])
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH found AS (
      SELECT t.id, t.organization_id, t.user_id, t.scopes, t.last_used_at
      FROM public.api_tokens t
      WHERE t.token_hash = p_token_hash
        AND t.revoked_at IS NULL
        AND (t.expires_at IS NULL OR t.expires_at > pg_catalog.now())
    ), touched AS (
      UPDATE public.api_tokens t SET last_used_at = pg_catalog.now()
      FROM found f
      WHERE t.id = f.id
        AND (f.last_used_at IS NULL OR f.last_used_at < pg_catalog.now() - interval '1 minute')
    )
    SELECT f.id, f.organization_id, f.user_id, m.role, f.scopes
    FROM found f
    JOIN public.members m ON m.organization_id = f.organization_id AND m.user_id = f.user_id;
END
$fn$`;

export const PURGE_FUNCTION = "purge_expired_memories";

/**
 * Removes the bodies (and subject ids and embeddings) of every expired memory in every
 * organization and writes one audit row per organization purged. SECURITY DEFINER owned by
 * `forma` so the server's periodic purge, on the app role, can reach all tenants; it takes no
 * argument and returns only counts.
 */
const PURGE_SQL = `
CREATE FUNCTION public.${PURGE_FUNCTION}()
RETURNS TABLE (organization_id uuid, purged integer)
LANGUAGE plpgsql
VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH erased AS (
      UPDATE public.memories m
      SET body = NULL, subject_id = NULL, embedding = NULL, purged_at = pg_catalog.now()
      WHERE m.expires_at <= pg_catalog.now() AND m.purged_at IS NULL AND m.forgotten_at IS NULL
      RETURNING m.organization_id
    ), counted AS (
      SELECT e.organization_id, count(*)::integer AS purged FROM erased e GROUP BY e.organization_id
    ), audited AS (
      INSERT INTO public.audit_events (organization_id, tool, outcome, affected)
      SELECT c.organization_id, 'north_purge', 'purged', c.purged FROM counted c
    )
    SELECT c.organization_id, c.purged FROM counted c;
END
$fn$`;

export const AUDIT_ADMIN_FUNCTION = "audit_events_for_admin";

/**
 * The most recent audit events of an organization, for a manager of it (the app role may only
 * INSERT into the ledger). Same checks as the profile function: the requester must be the
 * transaction's tenant and a manager. At most 500 rows a call. The ledger holds no body.
 */
const AUDIT_ADMIN_SQL = `
CREATE FUNCTION public.${AUDIT_ADMIN_FUNCTION}(p_organization_id uuid, p_requester_id uuid, p_limit integer)
RETURNS TABLE (
  occurred_at timestamptz,
  actor_id uuid,
  actor_email text,
  tool text,
  outcome text,
  target_fingerprint text,
  target_length integer,
  affected integer
)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
#variable_conflict use_column
BEGIN
${MANAGER_GUARD}
  RETURN QUERY
    SELECT e.occurred_at, e.actor_id, m.email, e.tool, e.outcome, e.target_fingerprint,
           e.target_length, e.affected
    FROM public.audit_events e
    LEFT JOIN public.members m ON m.organization_id = e.organization_id AND m.user_id = e.actor_id
    WHERE e.organization_id = p_organization_id
    ORDER BY e.occurred_at DESC
    LIMIT least(greatest(coalesce(p_limit, 100), 1), 500);
END
$fn$`;

/** SECURITY DEFINER functions provisioning owns: dropped and re-created on every run. */
const FUNCTIONS: ReadonlyArray<{ name: string; args: string; sql: string }> = [
  { name: ADMIN_FUNCTION, args: "uuid, uuid", sql: ADMIN_FUNCTION_SQL },
  { name: RESOLVE_TOKEN_FUNCTION, args: "text", sql: RESOLVE_TOKEN_SQL },
  { name: PURGE_FUNCTION, args: "", sql: PURGE_SQL },
  { name: AUDIT_ADMIN_FUNCTION, args: "uuid, uuid, integer", sql: AUDIT_ADMIN_SQL },
];

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Fixed key for `pg_advisory_xact_lock`: concurrent runs queue instead of racing on CREATE ROLE. */
const PROVISION_LOCK_KEY = 7_410_002;

/**
 * Creates or upgrades roles, ownership, grants and the admin function in one transaction.
 * Running it twice changes nothing; nothing is ever dropped with CASCADE, so a dependency we do
 * not know about makes provisioning fail loudly instead of silently removing it.
 *
 * Needs a connection allowed to create roles and to take ownership of North's tables (a
 * superuser, or a CREATEROLE role that is a member of `forma`), after `migrate`.
 */
export async function provisionDatabase(url: string, options: ProvisionOptions): Promise<void> {
  const login = options.loginUser;
  if (!ROLE_NAME.test(login) || login === "forma" || login === "app_role") {
    throw new TypeError(`DB_APP_LOGIN_USER must be a plain lowercase role name, not ${login}`);
  }
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client.begin(async (sql) => {
      await sql`select pg_advisory_xact_lock(${PROVISION_LOCK_KEY})`;

      for (const role of ["forma", "app_role", login]) {
        const [existing] = await sql`select 1 from pg_catalog.pg_roles where rolname = ${role}`;
        if (!existing) await sql.unsafe(`CREATE ROLE ${role}`);
      }
      const locked = "NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS";
      await sql.unsafe(`ALTER ROLE forma NOLOGIN NOINHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE app_role NOLOGIN NOINHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT ${locked}`);
      if (options.loginPassword !== undefined) {
        const [statement] = await sql<{ statement: string }[]>`
          select format('ALTER ROLE %I PASSWORD %L', ${login}::text, ${options.loginPassword}::text) as statement`;
        if (statement) await sql.unsafe(statement.statement);
      }
      // The login user holds app_role's privileges and nothing else: never forma's.
      const [inApp] = await sql`select pg_catalog.pg_has_role(${login}, 'app_role', 'MEMBER') as m`;
      if (!inApp?.m) await sql.unsafe(`GRANT app_role TO ${login}`);
      const [inForma] = await sql`
        select 1 from pg_catalog.pg_auth_members am
        join pg_catalog.pg_roles r on r.oid = am.roleid
        join pg_catalog.pg_roles mem on mem.oid = am.member
        where r.rolname = 'forma' and mem.rolname = ${login}`;
      if (inForma) await sql.unsafe(`REVOKE forma FROM ${login}`);

      await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");
      await sql.unsafe("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      for (const { table, privileges } of TABLE_GRANTS) {
        const name = `public.${getTableName(table)}`;
        await sql.unsafe(`ALTER TABLE ${name} OWNER TO forma`);
        await sql.unsafe(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY`);
        // Not forced: forma's owner bypass is what the admin function relies on.
        await sql.unsafe(`ALTER TABLE ${name} NO FORCE ROW LEVEL SECURITY`);
        await sql.unsafe(`REVOKE ALL ON ${name} FROM PUBLIC, app_role, ${login}`);
        if (privileges) await sql.unsafe(`GRANT ${privileges} ON ${name} TO app_role`);
      }

      // Drop every overload by its exact signature, without CASCADE, then re-create.
      for (const fn of FUNCTIONS) {
        const overloads = await sql<{ signature: string }[]>`
          select p.oid::regprocedure::text as signature
          from pg_catalog.pg_proc p
          join pg_catalog.pg_namespace n on n.oid = p.pronamespace
          where n.nspname = 'public' and p.proname = ${fn.name}`;
        for (const { signature } of overloads) await sql.unsafe(`DROP FUNCTION ${signature}`);
        await sql.unsafe(fn.sql);
        const qualified = `public.${fn.name}(${fn.args})`;
        await sql.unsafe(`ALTER FUNCTION ${qualified} OWNER TO forma`);
        await sql.unsafe(`REVOKE ALL ON FUNCTION ${qualified} FROM PUBLIC`);
        await sql.unsafe(`GRANT EXECUTE ON FUNCTION ${qualified} TO app_role`);
      }
    });
  } finally {
    await client.end({ timeout: 5 });
  }
}
