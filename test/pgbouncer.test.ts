import { connectDatabase, type DatabaseHandle, hasSqlState, withTenant } from "@north/db";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { loginUrl } from "./support/pg-urls.ts";
import { type PgBouncer, startPgBouncer } from "./support/pgbouncer.ts";

/**
 * SPEC §10: behind PgBouncer in transaction pooling mode. This suite runs its own PgBouncer
 * (whatever the run's setting), to show what such a pooler breaks and what
 * `NORTH_DB_POOLER=transaction` (`transactionPooler`) does about it. `.ci/run` also runs the MCP
 * acceptance suites through one (`NORTH_TEST_PGBOUNCER=1`).
 */

let db: TestDatabase;
let bouncer: PgBouncer;
let url: string;
const pools: DatabaseHandle[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  const direct = new URL(db.directAppUrl);
  bouncer = await startPgBouncer({
    serverUrl: db.ownerUrl,
    user: decodeURIComponent(direct.username),
    password: decodeURIComponent(direct.password),
  });
  const through = new URL(bouncer.url);
  through.pathname = `/${db.name}`;
  url = loginUrl(
    through.toString(),
    decodeURIComponent(direct.username),
    decodeURIComponent(direct.password),
  );
});
afterAll(async () => {
  for (const pool of pools) await pool.close();
  await bouncer?.stop();
  await db?.drop();
});

const pool = (transactionPooler: boolean) => {
  const handle = connectDatabase(url, { max: 4, statementTimeoutMs: 300, transactionPooler });
  pools.push(handle);
  return handle;
};

/** Tenant transactions from several clients at once, each with a parameterised statement. */
async function tenantReads(
  handle: DatabaseHandle,
  tenant: { organizationId: string; userId: string },
) {
  return Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      withTenant(handle.db, tenant, async (tx) => {
        const [row] = await tx.execute<{ n: number; timeout: string }>(
          sql`select ${i}::int as n, current_setting('statement_timeout') as timeout`,
        );
        return row;
      }),
    ),
  );
}

describe("behind PgBouncer in transaction mode", () => {
  it("refuses the connection's startup timeouts, which is why the pooler setting exists", async () => {
    const plain = pool(false);
    await expect(plain.client`select 1`).rejects.toThrow(/unsupported startup parameter/);
  });

  it("with transactionPooler: tenant transactions work, each under its own statement timeout", async () => {
    const { member } = await createWorkspace(db.owner.db);
    const rows = await tenantReads(pool(true), member);
    expect(rows.map((r) => r?.n)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(new Set(rows.map((r) => r?.timeout))).toEqual(new Set(["300ms"]));
  });

  it("with transactionPooler: a statement past the timeout is cancelled", async () => {
    const { member } = await createWorkspace(db.owner.db);
    const error = await withTenant(pool(true).db, member, (tx) =>
      tx.execute(sql`select pg_sleep(2)`),
    ).catch((e: unknown) => e);
    // 57014: query_canceled, here by statement_timeout.
    expect(hasSqlState(error, "57014")).toBe(true);
  });
});
