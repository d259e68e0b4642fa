import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { MAINTENANCE_ROLE } from "./definer.ts";

/**
 * Decision 031 (SPEC §3a): every SECURITY DEFINER function the app role may execute either takes
 * the organisation from the transaction's tenant settings or is a named pre-tenant lookup; the
 * functions that span organisations belong to the maintenance role, whose login the request path
 * never holds. Read from the catalogs, so a new function is held to the rule without anyone
 * remembering to list it.
 */

/**
 * The app role's definer functions that run before any tenant is known, and why none of them
 * crosses organisations (decision 031 says more). A new entry needs a reason as good as these.
 */
const PRE_TENANT_LOOKUPS: Record<string, string> = {
  resolve_api_token: "finds one token by the hash of a secret the caller holds",
  enter_as_api_token:
    "proves a token whose secret the caller holds still names this member, then sets that tenant",
  resolve_admin_session: "finds one console session by the hash of a secret the caller holds",
  sso_connection_for_domain: "one organisation's IdP routing, for the email domain typed in",
  sso_connection_for_organization: "one organisation's IdP routing, for a sign-in it started",
  active_member_for_user: "one member, behind a verified token's subject or the AS session",
  resolve_oauth_grant: "one member's grant, behind a verified access token's subject and client",
  enter_as_oauth_grant:
    "proves the grant a verified access token names still holds for this member, then sets that tenant",
  sign_in_session_record: "one browser session's record, by the session id its own cookie named",
};

/** Reads the organisation from the transaction's tenant, as the tenant-scoped functions must. */
const READS_TENANT = "current_setting('north.organization_id', true)";

/** The functions that span organisations: the maintenance role's alone. */
const CROSS_ORGANISATION = [
  ["memories_to_embed", "select * from memories_to_embed('m@2', 10)"],
  ["set_memory_embedding", "select set_memory_embedding(gen_random_uuid(), '{1,0}', 'm@2')"],
  ["purge_expired_memories", "select * from purge_expired_memories()"],
  ["ensure_memory_vector_index", "select ensure_memory_vector_index('m@2')"],
] as const;

let db: TestDatabase;
let ws: Workspace;
beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(async () => {
  await db?.drop();
});

/** The SECURITY DEFINER functions `role` may execute, with their source. */
async function definersFor(role: string) {
  return db.owner.client<{ name: string; source: string }[]>`
    select p.proname as name, p.prosrc as source
    from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where p.prosecdef and pg_catalog.has_function_privilege(${role}, p.oid, 'EXECUTE')
      and n.nspname not in ('pg_catalog', 'information_schema')
    order by p.proname`;
}

describe("definer function classes (decision 031)", () => {
  it("lets app_role execute only tenant-scoped definer functions and the named pre-tenant lookups", async () => {
    const functions = await definersFor("app_role");
    const tenantScoped = functions.filter((f) => f.source.includes(READS_TENANT));
    expect(tenantScoped.map((f) => f.name)).toContain("memory_fulltext_candidates");
    const unclassified = functions
      .filter((f) => !f.source.includes(READS_TENANT) && !(f.name in PRE_TENANT_LOOKUPS))
      .map((f) => f.name);
    expect(unclassified).toEqual([]);
    // No stale entry: every named lookup is still one of app_role's functions.
    const names = functions.map((f) => f.name);
    expect(Object.keys(PRE_TENANT_LOOKUPS).filter((name) => !names.includes(name))).toEqual([]);
  });

  it.each(CROSS_ORGANISATION)("refuses %s to the app login with 42501", async (_name, call) => {
    const attempt = await db.app.client.unsafe(call).then(
      () => "ran",
      (error: { code?: string }) => error.code,
    );
    expect(attempt).toBe("42501");
  });

  it("runs every cross-organisation function for the maintenance login", async () => {
    const [memory] = await db.owner.client<{ id: string }[]>`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      values (${ws.organizationId}, ${ws.member.userId}, 'fact', 'stated', 'to embed', 'test',
              now() + interval '1 day')
      returning id`;
    const sql = db.maintenance.client;
    const pending = await sql`select * from memories_to_embed('m@2', 256)`;
    expect(pending.map((m) => m.id)).toContain(memory?.id);
    const [stored] = await sql`
      select set_memory_embedding(${memory?.id ?? ""}::uuid, '{1,0}', 'm@2') as stored`;
    expect(stored).toEqual({ stored: true });
    await sql`select * from purge_expired_memories()`;
    const [index] = await sql`select ensure_memory_vector_index('m@2') as outcome`;
    expect(["created", "present", "unavailable"]).toContain(index?.outcome);
  });

  it("gives the maintenance role those functions and nothing else", async () => {
    const functions = await definersFor(MAINTENANCE_ROLE);
    expect(functions.map((f) => f.name).sort()).toEqual(
      CROSS_ORGANISATION.map(([name]) => name).sort(),
    );
    const [tables] = await db.owner.client`
      select count(*)::int as n from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ('public', 'north_auth') and c.relkind = 'r'
        and (pg_catalog.has_table_privilege(${db.maintenanceLoginUser}, c.oid, 'SELECT')
          or pg_catalog.has_table_privilege(${db.maintenanceLoginUser}, c.oid, 'INSERT, UPDATE, DELETE'))`;
    expect(tables).toEqual({ n: 0 });
  });

  it("keeps the maintenance role locked down and out of the app login's reach", async () => {
    const roles = await db.owner.client`
      select rolname, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin, rolinherit
      from pg_catalog.pg_roles where rolname in (${MAINTENANCE_ROLE}, ${db.maintenanceLoginUser})
      order by rolname = ${MAINTENANCE_ROLE} desc`;
    const locked = {
      rolsuper: false,
      rolbypassrls: false,
      rolcreaterole: false,
      rolcreatedb: false,
    };
    expect(roles).toEqual([
      { rolname: MAINTENANCE_ROLE, ...locked, rolcanlogin: false, rolinherit: false },
      { rolname: db.maintenanceLoginUser, ...locked, rolcanlogin: true, rolinherit: true },
    ]);
    const [reach] = await db.owner.client`
      select pg_catalog.pg_has_role(${db.loginUser}, ${MAINTENANCE_ROLE}, 'MEMBER') as app_login,
             pg_catalog.pg_has_role(${db.maintenanceLoginUser}, 'app_role', 'MEMBER') as app_role,
             pg_catalog.pg_has_role(${db.maintenanceLoginUser}, 'forma', 'MEMBER') as forma`;
    expect(reach).toEqual({ app_login: false, app_role: false, forma: false });
  });
});
