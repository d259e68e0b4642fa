import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../test/support/fixtures.ts";
import { connectDatabase, type Database } from "./client.ts";
import { organizations } from "./schema/index.ts";
import { withTenant } from "./tenant.ts";

let db: TestDatabase;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(() => db.drop());

const tenant = () => ({ organizationId: ws.organizationId, userId: ws.member.userId });

/** The statements this session holds prepared that read the organisations table. */
async function preparedOrganizationReads(pool: Database): Promise<number> {
  return withTenant(pool, tenant(), async (tx) => {
    await tx.select().from(organizations).where(eq(organizations.id, ws.organizationId));
    await tx.select().from(organizations).where(eq(organizations.id, ws.organizationId));
    const rows = await tx.execute<{ n: number }>(
      sql`select count(*)::int as n from pg_prepared_statements where statement like '%from "organizations"%'`,
    );
    return rows[0]?.n ?? -1;
  });
}

// Decision 026: every statement Drizzle sends is prepared once per connection, so a request's
// statements cost one round trip each instead of a Parse/Describe round trip and a fresh plan.
describe("the app pool's statements", () => {
  it("are named prepared statements, kept by the connection, inside transactions", async () => {
    const pool = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      expect(await preparedOrganizationReads(pool.db)).toBe(1);
      // Outside a transaction too (the token check runs there).
      await pool.db.select().from(organizations).where(eq(organizations.id, ws.organizationId));
      const rows = await pool.db.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_prepared_statements where statement like '%from "organizations"%'`,
      );
      expect(rows[0]?.n).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it("are never prepared behind a transaction pooler, which may change connection between transactions", async () => {
    const pool = connectDatabase(db.directAppUrl, { max: 1, transactionPooler: true });
    try {
      expect(await preparedOrganizationReads(pool.db)).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("are prepared inside nested transactions (savepoints) too", async () => {
    const pool = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      const { names, prepared } = await withTenant(pool.db, tenant(), (tx) =>
        tx.transaction(async (inner) => {
          const names = await inner
            .select({ name: organizations.name })
            .from(organizations)
            .where(eq(organizations.id, ws.organizationId));
          const rows = await inner.execute<{ n: number }>(
            sql`select count(*)::int as n from pg_prepared_statements where statement like 'select "name" from "organizations"%'`,
          );
          return { names, prepared: rows[0]?.n };
        }),
      );
      expect(names).toHaveLength(1);
      expect(prepared).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
