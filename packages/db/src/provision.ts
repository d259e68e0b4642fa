import { getTableName } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { ADVISORY_LOCKS } from "./advisory-locks.ts";
import { MAINTENANCE_ROLE } from "./definer.ts";
import { DEFINER_FUNCTIONS } from "./definer-functions.ts";
import {
  adminSessions,
  apiTokens,
  auditEvents,
  matterScreens,
  matters,
  matterTeam,
  memberIdentities,
  members,
  memories,
  organizations,
  ssoConnections,
  ssoDomains,
  workingProfileAnswers,
} from "./schema/index.ts";

export interface ProvisionOptions {
  /** The login role the app connects as at run time (`DB_APP_LOGIN_USER`). */
  loginUser: string;
  /** Its password (`DB_APP_LOGIN_PASSWORD`); left unchanged when omitted. */
  loginPassword?: string;
  /**
   * The login role of the maintenance jobs (`DB_MAINTENANCE_LOGIN_USER`): the embeddings
   * backfill, the periodic purge and the vector-index request. Default
   * {@link MAINTENANCE_LOGIN_DEFAULT}.
   */
  maintenanceLoginUser?: string;
  /** Its password (`DB_MAINTENANCE_LOGIN_PASSWORD`); left unchanged when omitted. */
  maintenanceLoginPassword?: string;
}

/** The maintenance login's name when `DB_MAINTENANCE_LOGIN_USER` is not set. */
export const MAINTENANCE_LOGIN_DEFAULT = "north_maintenance_login";

/**
 * What `app_role` may do on each table, and nothing more. Column lists keep an UPDATE from ever
 * rewriting a key: moving a row to another owner or organization is refused before RLS is asked.
 */
const TABLE_GRANTS: ReadonlyArray<{ table: PgTable; privileges: string }> = [
  { table: organizations, privileges: "SELECT" },
  { table: members, privileges: "SELECT" },
  {
    table: workingProfileAnswers,
    privileges: "SELECT, INSERT, UPDATE (question_text, answer, version, updated_at)",
  },
  { table: auditEvents, privileges: "INSERT" },
  {
    table: memories,
    // Forgetting blanks a memory in place, superseding marks it replaced; nothing else changes.
    privileges:
      "SELECT, INSERT, UPDATE (body, subject_id, embedding, embedding_model, forgotten_at, forgotten_by, superseded_by, superseded_at)",
  },
  // Written by the operator CLI (owner); the app reads its organisation's to apply SPEC §5a.
  { table: matters, privileges: "SELECT" },
  { table: matterTeam, privileges: "SELECT" },
  { table: matterScreens, privileges: "SELECT" },
  // Nothing: the app reads tokens only through resolve_api_token.
  { table: apiTokens, privileges: "" },
  // Opened and ended in the member's own tenant; looked up by hash only through
  // resolve_admin_session. Ending one is the only change the app role may make.
  { table: adminSessions, privileges: "SELECT, INSERT, UPDATE (ended_at)" },
  // Sign-in configuration and bindings: read and written only through the definer functions.
  { table: ssoConnections, privileges: "" },
  { table: ssoDomains, privileges: "" },
  { table: memberIdentities, privileges: "" },
];

/**
 * The authorization server's own schema (schema/authorization-server.ts): the library's tables,
 * read and written by the app role before any tenant is known, so without row-level security.
 */
export const AUTHORIZATION_SERVER_SCHEMA = "north_auth";

/** Every table North owns: provisioning hands each to `forma` and sets its grants. */
export const PROVISIONED_TABLES: readonly PgTable[] = TABLE_GRANTS.map((g) => g.table);

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const PROVISION_LOCK_KEY = ADVISORY_LOCKS.provision;

/**
 * Creates or upgrades roles, ownership, grants and the SECURITY DEFINER functions in one
 * transaction.
 * Running it twice changes nothing; nothing is ever dropped with CASCADE, so a dependency we do
 * not know about makes provisioning fail loudly instead of silently removing it.
 *
 * Needs a connection allowed to create roles and to take ownership of North's tables (a
 * superuser, or a CREATEROLE role that is a member of `forma`), after `migrate`.
 */
export async function provisionDatabase(url: string, options: ProvisionOptions): Promise<void> {
  const login = options.loginUser;
  const maintenanceLogin = options.maintenanceLoginUser ?? MAINTENANCE_LOGIN_DEFAULT;
  const groups = ["forma", "app_role", MAINTENANCE_ROLE];
  if (!ROLE_NAME.test(login) || groups.includes(login)) {
    throw new TypeError(`DB_APP_LOGIN_USER must be a plain lowercase role name, not ${login}`);
  }
  if (!ROLE_NAME.test(maintenanceLogin) || [...groups, login].includes(maintenanceLogin)) {
    throw new TypeError(
      `DB_MAINTENANCE_LOGIN_USER must be a plain lowercase role name other than the app login's, not ${maintenanceLogin}`,
    );
  }
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await client.begin(async (sql) => {
      await sql`select pg_advisory_xact_lock(${PROVISION_LOCK_KEY})`;

      for (const role of [...groups, login, maintenanceLogin]) {
        const [existing] = await sql`select 1 from pg_catalog.pg_roles where rolname = ${role}`;
        if (!existing) await sql.unsafe(`CREATE ROLE ${role}`);
      }
      const locked = "NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS";
      await sql.unsafe(`ALTER ROLE forma NOLOGIN NOINHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE app_role NOLOGIN NOINHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE ${MAINTENANCE_ROLE} NOLOGIN NOINHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE ${login} LOGIN INHERIT ${locked}`);
      await sql.unsafe(`ALTER ROLE ${maintenanceLogin} LOGIN INHERIT ${locked}`);
      for (const [role, password] of [
        [login, options.loginPassword],
        [maintenanceLogin, options.maintenanceLoginPassword],
      ] as const) {
        if (password === undefined) continue;
        const [statement] = await sql<{ statement: string }[]>`
          select format('ALTER ROLE %I PASSWORD %L', ${role}::text, ${password}::text) as statement`;
        if (statement) await sql.unsafe(statement.statement);
      }
      // Each login holds its own group's privileges and nothing else: never forma's, and the
      // app login never the maintenance role's (nor the maintenance login the app role's).
      for (const [member, group, others] of [
        [login, "app_role", ["forma", MAINTENANCE_ROLE]],
        [maintenanceLogin, MAINTENANCE_ROLE, ["forma", "app_role"]],
      ] as const) {
        const [inGroup] =
          await sql`select pg_catalog.pg_has_role(${member}, ${group}, 'MEMBER') as m`;
        if (!inGroup?.m) await sql.unsafe(`GRANT ${group} TO ${member}`);
        for (const other of others) {
          const [granted] = await sql`
            select 1 from pg_catalog.pg_auth_members am
            join pg_catalog.pg_roles r on r.oid = am.roleid
            join pg_catalog.pg_roles mem on mem.oid = am.member
            where r.rolname = ${other} and mem.rolname = ${member}`;
          if (granted) await sql.unsafe(`REVOKE ${other} FROM ${member}`);
        }
      }

      await sql.unsafe("GRANT USAGE ON SCHEMA public TO app_role");
      await sql.unsafe(`GRANT USAGE ON SCHEMA public TO ${MAINTENANCE_ROLE}`);
      await sql.unsafe("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      // An index lives in its table's schema: ensure_memory_vector_index, running as forma,
      // creates a model's HNSW index there (decision 028). forma owns the tables already.
      await sql.unsafe("GRANT CREATE ON SCHEMA public TO forma");
      for (const { table, privileges } of TABLE_GRANTS) {
        const name = `public.${getTableName(table)}`;
        await sql.unsafe(`ALTER TABLE ${name} OWNER TO forma`);
        await sql.unsafe(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY`);
        // Not forced: forma's owner bypass is what the admin function relies on.
        await sql.unsafe(`ALTER TABLE ${name} NO FORCE ROW LEVEL SECURITY`);
        await sql.unsafe(
          `REVOKE ALL ON ${name} FROM PUBLIC, app_role, ${login}, ${MAINTENANCE_ROLE}, ${maintenanceLogin}`,
        );
        if (privileges) await sql.unsafe(`GRANT ${privileges} ON ${name} TO app_role`);
      }

      const authSchema = AUTHORIZATION_SERVER_SCHEMA;
      await sql.unsafe(`ALTER SCHEMA ${authSchema} OWNER TO forma`);
      await sql.unsafe(`REVOKE ALL ON SCHEMA ${authSchema} FROM PUBLIC`);
      await sql.unsafe(`GRANT USAGE ON SCHEMA ${authSchema} TO app_role`);
      const authTables = await sql<{ name: string }[]>`
        select tablename as name from pg_catalog.pg_tables where schemaname = ${authSchema}`;
      for (const { name } of authTables) {
        const qualified = `${authSchema}."${name}"`;
        await sql.unsafe(`ALTER TABLE ${qualified} OWNER TO forma`);
        await sql.unsafe(
          `REVOKE ALL ON ${qualified} FROM PUBLIC, app_role, ${login}, ${MAINTENANCE_ROLE}, ${maintenanceLogin}`,
        );
        await sql.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${qualified} TO app_role`);
      }

      // Drop every overload by its exact signature, without CASCADE, then re-create.
      for (const fn of DEFINER_FUNCTIONS) {
        const overloads = await sql<{ signature: string }[]>`
          select p.oid::regprocedure::text as signature
          from pg_catalog.pg_proc p
          join pg_catalog.pg_namespace n on n.oid = p.pronamespace
          where n.nspname = 'public' and p.proname = ${fn.name}`;
        for (const { signature } of overloads) await sql.unsafe(`DROP FUNCTION ${signature}`);
        await sql.unsafe(fn.sql);
        const qualified = `public.${fn.name}(${fn.argTypes})`;
        await sql.unsafe(`ALTER FUNCTION ${qualified} OWNER TO forma`);
        await sql.unsafe(`REVOKE ALL ON FUNCTION ${qualified} FROM PUBLIC`);
        await sql.unsafe(`GRANT EXECUTE ON FUNCTION ${qualified} TO ${fn.grantee}`);
      }
    });
  } finally {
    await client.end({ timeout: 5 });
  }
}
