import { randomBytes } from "node:crypto";
import { ensureAuthorizationServerUser } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { north } from "../support/processes.ts";
import { readiness, spawnServe } from "../support/serve-process.ts";

/**
 * Issue 21, point 9 (SPEC §3a): no SECURITY DEFINER function the app role may run crosses
 * organisations. The attacker holds the app login (a leaked `DATABASE_APP_URL`, or code running
 * in the server) and calls the embeddings backfill's and the purge's functions without any
 * tenant: they used to answer with, or act on, every organisation's memories.
 */

let db: TestDatabase;
let victim: Workspace;
let memoryId: string;
const BODY = "Client Durand settles for 2.4 million before the Lyon hearing";

beforeAll(async () => {
  db = await createTestDatabase();
  victim = await createWorkspace(db.owner.db, "Victim");
  const [row] = await db.owner.client<{ id: string }[]>`
    insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
    values (${victim.organizationId}, ${victim.member.userId}, 'fact', 'stated', ${BODY}, 'test',
            now() + interval '1 day'),
           (${victim.organizationId}, ${victim.member.userId}, 'fact', 'stated', 'expired note',
            'test', now() - interval '1 minute')
    returning id`;
  memoryId = row?.id ?? "";
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `statement` as the app login with no tenant set; the SQLSTATE it fails with, or its rows. */
async function asAppLogin(statement: (sql: TestDatabase["app"]["client"]) => Promise<unknown>) {
  return statement(db.app.client).then(
    (rows) => ({ rows }),
    (error: { code?: string }) => ({ code: error.code }),
  );
}

describe("the app login cannot run the cross-organisation maintenance functions", () => {
  it("reads no organisation's memory bodies through memories_to_embed", async () => {
    const attempt = await asAppLogin((sql) => sql`select * from memories_to_embed('x', 256)`);
    expect(JSON.stringify(attempt)).not.toContain("Durand");
    expect(attempt).toEqual({ code: "42501" });
  });

  it("writes no organisation's memory through set_memory_embedding", async () => {
    const attempt = await asAppLogin(
      (sql) => sql`select set_memory_embedding(${memoryId}::uuid, '{1,0}'::real[], 'attacker@2')`,
    );
    expect(attempt).toEqual({ code: "42501" });
    const [stored] = await db.owner.client`
      select embedding_model from memories where id = ${memoryId}`;
    expect(stored).toEqual({ embedding_model: null });
  });

  it("purges no organisation's expired memories through purge_expired_memories", async () => {
    const attempt = await asAppLogin((sql) => sql`select * from purge_expired_memories()`);
    expect(attempt).toEqual({ code: "42501" });
    const [expired] = await db.owner.client`
      select body from memories
      where organization_id = ${victim.organizationId} and expires_at < now()`;
    expect(expired).toEqual({ body: "expired note" });
  });

  it("builds no index on every organisation's memories through ensure_memory_vector_index", async () => {
    const attempt = await asAppLogin(
      (sql) => sql`select ensure_memory_vector_index('attacker@2') as outcome`,
    );
    expect(attempt).toEqual({ code: "42501" });
  });
});

describe("north serve runs the maintenance jobs on the maintenance login only", () => {
  it("purges expired memories through DATABASE_MAINTENANCE_URL", async () => {
    const firm = await createWorkspace(db.owner.db, "Purged");
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      values (${firm.organizationId}, ${firm.member.userId}, 'fact', 'stated', 'lapsed', 'test',
              now() - interval '1 minute')`;
    const server = await spawnServe(db.appUrl, {
      NORTH_DB_POOLER: db.pooler,
      DATABASE_MAINTENANCE_URL: db.maintenanceUrl,
      NORTH_PURGE_INTERVAL_S: "1",
    });
    try {
      await server.waitFor(/purged expired memories/, 15_000);
      const [lapsed] = await db.owner.client`
        select body from memories where organization_id = ${firm.organizationId}`;
      expect(lapsed).toEqual({ body: null });
      expect(server.stdout()).not.toMatch(/purge failed|maintenanceOff/);
    } finally {
      await server.interrupt();
    }
  }, 60_000);

  it("still serves without DATABASE_MAINTENANCE_URL, saying once that the purge is off", async () => {
    const server = await spawnServe(db.appUrl, {
      NORTH_DB_POOLER: db.pooler,
      NORTH_PURGE_INTERVAL_S: "1",
    });
    try {
      await server.waitFor(/"maintenanceOff":\["purge"\]/);
      expect((await readiness(server.base)).code).toBe(200);
      await new Promise((r) => setTimeout(r, 2_500)); // two purge intervals
      expect(server.stdout().match(/maintenanceOff/g)).toHaveLength(1);
      expect(server.stdout()).not.toMatch(/purge failed/);
    } finally {
      await server.interrupt();
    }
  }, 60_000);

  it("refuses to start when DATABASE_MAINTENANCE_URL's role may not run the maintenance functions", async () => {
    const result = await north(["serve", "--port", "0"], {
      DATABASE_APP_URL: db.appUrl,
      DATABASE_MAINTENANCE_URL: db.directAppUrl,
      NORTH_DB_POOLER: db.pooler,
      NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
      NORTH_SECRET_KEY: randomBytes(32).toString("base64url"),
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      /^north: refusing to serve: the maintenance role \S+ may not run the maintenance functions/,
    );
  }, 60_000);
});

describe("the app login cannot list members through the sign-in lookups", () => {
  it("reads no member's email through active_member_for_user, for every user id it can list", async () => {
    // An independent review's attack: every user id that ever signed in is in the library's
    // table, and the lookup answered for any of them with the member's email.
    const other = await createWorkspace(db.owner.db, "Other firm");
    for (const user of [victim.member, other.member]) {
      await ensureAuthorizationServerUser(db.owner.db, user.userId);
    }
    const rows = await db.app.client<Record<string, unknown>[]>`
      select m.* from north_auth."user" u
      cross join lateral public.active_member_for_user(u.id::uuid) m`;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(["organization_id", "role"]);
    expect(JSON.stringify(rows)).not.toContain("@");
  });
});
