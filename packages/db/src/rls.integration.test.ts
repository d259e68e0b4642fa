import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import type { Tenant } from "./tenant.ts";

/**
 * The RLS matrix: each tenant table × select/insert/update/delete × (own row, another user of the
 * same organization, another organization), run as the app login role inside a tenant
 * transaction for a member of organization A. Allowed writes prove themselves with RETURNING
 * (or the insert count where the app role may not read back); denied ones touch 0 rows or raise
 * 42501.
 */

type Target = "own" | "same-org user" | "other org";
type Expectation = number | "denied";
type Sql = postgres.TransactionSql;

let db: TestDatabase;
let a: Workspace;
let b: Workspace;
/** Each seeded user's API token, for the sessions rows. */
const tokenOf = new Map<string, string>();

beforeAll(async () => {
  db = await createTestDatabase();
  a = await createWorkspace(db.owner.db, "A");
  b = await createWorkspace(db.owner.db, "B");
  for (const owner of [a.member, a.manager, b.member]) {
    await db.owner.client`
      insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
      values (${owner.organizationId}, ${owner.userId}, 'seed', 'Seed?', 'seed answer')`;
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      values (${owner.organizationId}, ${owner.userId}, 'fact', 'stated', 'seed memory', 'seed', now() + interval '1 day')`;
    const [token] = await db.owner.client<{ id: string }[]>`
      insert into api_tokens (organization_id, user_id, token_hash, scopes)
      values (${owner.organizationId}, ${owner.userId}, encode(sha256(${owner.userId}::bytea), 'hex'), '{admin}')
      returning id`;
    tokenOf.set(owner.userId, token?.id ?? "");
    await db.owner.client`
      insert into admin_sessions (session_hash, organization_id, user_id, token_id, csrf_token, idle_timeout_s, expires_at)
      values (encode(sha256(${`seed ${owner.userId}`}::bytea), 'hex'), ${owner.organizationId}, ${owner.userId},
              ${token?.id ?? ""}, repeat('s', 43), 1800, now() + interval '8 hours')`;
  }
});
afterAll(() => db.drop());

/** The user each target names, seen from a.member. */
const targetUser = (target: Target): Tenant =>
  target === "own" ? a.member : target === "same-org user" ? a.manager : b.member;

async function asTenant<T>(tenant: Tenant | null, work: (sql: Sql) => Promise<T>): Promise<T> {
  return (await db.app.client.begin(async (sql) => {
    if (tenant) {
      await sql`select set_config('north.organization_id', ${tenant.organizationId}, true),
                       set_config('north.user_id', ${tenant.userId}, true)`;
    }
    return work(sql);
  })) as T;
}

async function outcome(work: (sql: Sql) => Promise<number>): Promise<Expectation> {
  try {
    return await asTenant(a.member, work);
  } catch (error) {
    if ((error as { code?: string }).code === "42501") return "denied";
    throw error;
  }
}

type Op = "select" | "insert" | "update" | "delete";
const statements: Record<string, Record<Op, (t: Tenant, sql: Sql) => Promise<number>>> = {
  working_profile_answers: {
    select: async (t, sql) =>
      (await sql`select 1 from working_profile_answers where owner_user_id = ${t.userId}`).length,
    insert: async (t, sql) =>
      (
        await sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, answer)
                  values (${t.organizationId}, ${t.userId}, ${`m-${randomUUID()}`}, 'x') returning 1`
      ).length,
    update: async (t, sql) =>
      (
        await sql`update working_profile_answers set answer = 'changed'
                  where owner_user_id = ${t.userId} and question_id = 'seed' returning 1`
      ).length,
    delete: async (t, sql) =>
      (await sql`delete from working_profile_answers where owner_user_id = ${t.userId} returning 1`)
        .length,
  },
  members: {
    select: async (t, sql) => (await sql`select 1 from members where user_id = ${t.userId}`).length,
    insert: async (t, sql) =>
      (
        await sql`insert into members (organization_id, email)
                  values (${t.organizationId}, ${`${randomUUID()}@x.test`}) returning 1`
      ).length,
    update: async (t, sql) =>
      (await sql`update members set role = 'manager' where user_id = ${t.userId} returning 1`)
        .length,
    delete: async (t, sql) =>
      (await sql`delete from members where user_id = ${t.userId} returning 1`).length,
  },
  organizations: {
    select: async (t, sql) =>
      (await sql`select 1 from organizations where id = ${t.organizationId}`).length,
    insert: async (_t, sql) =>
      (await sql`insert into organizations (name) values ('new') returning 1`).length,
    update: async (t, sql) =>
      (await sql`update organizations set name = 'x' where id = ${t.organizationId} returning 1`)
        .length,
    delete: async (t, sql) =>
      (await sql`delete from organizations where id = ${t.organizationId} returning 1`).length,
  },
  memories: {
    select: async (t, sql) =>
      (await sql`select 1 from memories where author_id = ${t.userId}`).length,
    insert: async (t, sql) =>
      (
        await sql`insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
                  values (${t.organizationId}, ${t.userId}, 'fact', 'stated', 'x', 'test', now() + interval '1 day') returning 1`
      ).length,
    update: async (t, sql) =>
      (
        await sql`update memories set body = null, forgotten_at = now(), forgotten_by = ${a.member.userId}
                  where author_id = ${t.userId} and body = 'seed memory' returning 1`
      ).length,
    delete: async (t, sql) =>
      (await sql`delete from memories where author_id = ${t.userId} returning 1`).length,
  },
  api_tokens: {
    select: async (t, sql) =>
      (await sql`select 1 from api_tokens where user_id = ${t.userId}`).length,
    insert: async (t, sql) =>
      (
        await sql`insert into api_tokens (organization_id, user_id, token_hash, scopes)
                  values (${t.organizationId}, ${t.userId}, repeat('a', 64), '{}') returning 1`
      ).length,
    update: async (t, sql) =>
      (await sql`update api_tokens set revoked_at = now() where user_id = ${t.userId}`).count,
    delete: async (t, sql) => (await sql`delete from api_tokens where user_id = ${t.userId}`).count,
  },
  admin_sessions: {
    select: async (t, sql) =>
      (
        await sql`select 1 from admin_sessions
                  where user_id = ${t.userId} and csrf_token = repeat('s', 43)`
      ).length,
    insert: async (t, sql) =>
      (
        await sql`insert into admin_sessions (session_hash, organization_id, user_id, token_id, csrf_token, idle_timeout_s, expires_at)
                  values (encode(sha256(${randomUUID()}::bytea), 'hex'), ${t.organizationId}, ${t.userId},
                          ${tokenOf.get(t.userId) ?? ""}, repeat('i', 43), 60, now() + interval '1 hour') returning 1`
      ).length,
    update: async (t, sql) =>
      (
        await sql`update admin_sessions set ended_at = now()
                  where user_id = ${t.userId} and csrf_token = repeat('s', 43) returning 1`
      ).length,
    delete: async (t, sql) =>
      (await sql`delete from admin_sessions where user_id = ${t.userId} returning 1`).length,
  },
  audit_events: {
    select: async (t, sql) =>
      (await sql`select 1 from audit_events where organization_id = ${t.organizationId}`).length,
    // The app role may not read the ledger back, so RETURNING is refused: count the insert.
    insert: async (t, sql) =>
      (
        await sql`insert into audit_events (organization_id, actor_id, tool, outcome)
                  values (${t.organizationId}, ${t.userId}, 'rls_matrix', 'read')`
      ).count,
    update: async (t, sql) =>
      (await sql`update audit_events set outcome = 'error' where actor_id = ${t.userId}`).count,
    delete: async (t, sql) =>
      (await sql`delete from audit_events where actor_id = ${t.userId}`).count,
  },
};

const D = "denied" as const;
/** [own, same-org user, other org] for each table and operation. */
const MATRIX: Record<string, Record<Op, [Expectation, Expectation, Expectation]>> = {
  working_profile_answers: {
    select: [1, 0, 0],
    insert: [1, D, D],
    update: [1, 0, 0],
    delete: [D, D, D],
  },
  members: { select: [1, 1, 0], insert: [D, D, D], update: [D, D, D], delete: [D, D, D] },
  organizations: { select: [1, 1, 0], insert: [D, D, D], update: [D, D, D], delete: [D, D, D] },
  audit_events: { select: [D, D, D], insert: [1, D, D], update: [D, D, D], delete: [D, D, D] },
  // Visible to the whole organization; forgetting (an UPDATE) is allowed organization-wide by
  // policy, and narrowed to author-or-manager by the store.
  memories: { select: [1, 1, 0], insert: [1, D, D], update: [1, 1, 0], delete: [D, D, D] },
  // Own sessions only; looked up by hash through resolve_admin_session.
  admin_sessions: {
    select: [1, 0, 0],
    insert: [1, D, D],
    update: [1, 0, 0],
    delete: [D, D, D],
  },
  // No privilege at all: the app reaches tokens only through resolve_api_token.
  api_tokens: { select: [D, D, D], insert: [D, D, D], update: [D, D, D], delete: [D, D, D] },
};

const TARGETS: Target[] = ["own", "same-org user", "other org"];
const cases = Object.entries(MATRIX).flatMap(([table, ops]) =>
  Object.entries(ops).flatMap(([op, expected]) =>
    TARGETS.map((target, i) => ({ table, op: op as Op, target, expected: expected[i] })),
  ),
);

describe("row-level security matrix for the app login role", () => {
  it.each(cases)("$table × $op × $target → $expected", async ({ table, op, target, expected }) => {
    const run = statements[table]?.[op];
    if (!run) throw new Error(`no statement for ${table} ${op}`);
    expect(await outcome((sql) => run(targetUser(target), sql))).toBe(expected);
  });

  // Refused by app_role's column privileges, before any policy is asked (provision.ts); the
  // update policy's WITH CHECK and the select policy would refuse it too, so checking only for
  // 42501 would not notice a grant widened to every column.
  const PRIVILEGE_REFUSAL = { code: "42501", routine: "aclcheck_error" };

  it("refuses an update that moves an own row to another organization", async () => {
    const moved = asTenant(
      a.member,
      (sql) => sql`update working_profile_answers set organization_id = ${b.organizationId}
                   where owner_user_id = ${a.member.userId} returning 1`,
    );
    await expect(moved).rejects.toMatchObject(PRIVILEGE_REFUSAL);
  });

  it("refuses an update that hands an own session to another member", async () => {
    const moved = asTenant(
      a.member,
      (sql) => sql`update admin_sessions set user_id = ${a.manager.userId}
                   where user_id = ${a.member.userId} returning 1`,
    );
    await expect(moved).rejects.toMatchObject(PRIVILEGE_REFUSAL);
  });

  it("refuses an update that hands an own row to another owner", async () => {
    const moved = asTenant(
      a.member,
      (sql) => sql`update working_profile_answers set owner_user_id = ${a.manager.userId}
                   where owner_user_id = ${a.member.userId} returning 1`,
    );
    await expect(moved).rejects.toMatchObject(PRIVILEGE_REFUSAL);
  });

  it.each(["working_profile_answers", "members", "organizations"])(
    "reads nothing from %s without tenant context",
    async (table) => {
      const rows = await asTenant(null, (sql) => sql`select 1 from ${sql(table)}`);
      expect(rows).toHaveLength(0);
      const [owned] = await db.owner
        .client`select count(*)::int as n from ${db.owner.client(table)}`;
      expect(owned?.n).toBeGreaterThan(0);
    },
  );

  it("reads nothing after a tenant transaction on the same pooled connection has ended", async () => {
    const pinned = await db.app.client.reserve();
    try {
      await pinned`begin`;
      await pinned`select set_config('north.organization_id', ${a.organizationId}, true),
                          set_config('north.user_id', ${a.member.userId}, true)`;
      expect(await pinned`select 1 from working_profile_answers`).not.toHaveLength(0);
      await pinned`commit`;
      expect(await pinned`select 1 from working_profile_answers`).toHaveLength(0);
    } finally {
      pinned.release();
    }
  });
});
