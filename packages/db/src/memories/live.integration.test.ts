import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../../test/support/database.ts";
import { createWorkspace, type Workspace } from "../../../../test/support/fixtures.ts";
import type { Tx } from "../client.ts";
import { memories } from "../schema/index.ts";
import { HOLDS_BODY, holdsBodySql, LIVE_MEMORY, liveMemorySql } from "./live.ts";

/**
 * Issue 24: "live memory" and "holds its body" are each defined once for Drizzle and once for
 * PL/pgSQL (live.ts). Here both definitions of each read the same rows — one memory in every
 * state a memory can be in, an expired one under legal hold included — and pick exactly the
 * same ones, and the ones SPEC §5 and §5a mean.
 */

let db: TestDatabase;
let ws: Workspace;
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
  const insert = async (name: string, extra: string) => {
    const [row] = await db.owner.client.unsafe<{ id: string }[]>(
      `insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
       values ($1, $2, 'fact', 'stated', $3, 'live-test', now() + interval '1 day')
       returning id`,
      [ws.organizationId, ws.member.userId, `Memory ${name}`],
    );
    ids[name] = row?.id ?? "";
    if (extra)
      await db.owner.client.unsafe(`update memories set ${extra} where id = $1`, [ids[name]]);
  };
  await insert("live", "");
  await insert("replacement", "");
  await insert("expired", "expires_at = now() - interval '1 second'");
  await insert("forgotten", "forgotten_at = now(), body = null");
  await insert("purged", "purged_at = now(), body = null");
  await insert("superseded", `superseded_by = '${ids.replacement}', superseded_at = now()`);
  // Expired, in a matter under legal hold: live while the hold lasts (SPEC §5a).
  const [held] = await db.owner.client<{ id: string }[]>`
    insert into matters (organization_id, reference, name, hold_reason, held_since)
    values (${ws.organizationId}, 'HOLD-LIVE', 'Held', 'Litigation hold', now()) returning id`;
  await insert(
    "held-expired",
    `expires_at = now() - interval '1 second', matter_id = '${held?.id}'`,
  );
});

/** Both definitions read in one tenant transaction: a hold is the organisation's. */
const inTenant = <T>(work: (tx: Tx) => Promise<T>) =>
  db.owner.db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('north.organization_id', ${ws.organizationId}, true)`);
    return work(tx);
  });
afterAll(async () => {
  await db?.drop();
});

const names = (rows: { id: string }[]) =>
  rows.map((r) => Object.entries(ids).find(([, id]) => id === r.id)?.[0]).sort();

describe("the memory states, defined once per language (issue 24)", () => {
  it("live: Drizzle and PL/pgSQL pick the same memories, the live ones only", async () => {
    const inOrg = eq(memories.organizationId, ws.organizationId);
    const byDrizzle = await inTenant((tx) =>
      tx
        .select({ id: memories.id })
        .from(memories)
        .where(and(inOrg, ...LIVE_MEMORY)),
    );
    const byPlpgsql = await inTenant((tx) =>
      tx.execute<{ id: string }>(
        sql.raw(
          `select m.id from memories m where m.organization_id = '${ws.organizationId}' and ${liveMemorySql("m")}`,
        ),
      ),
    );
    expect(names(byDrizzle)).toEqual(["held-expired", "live", "replacement"]);
    expect(names(byPlpgsql)).toEqual(names(byDrizzle));
  });

  it("holds its body: Drizzle and PL/pgSQL pick the same memories, all but the erased", async () => {
    const inOrg = eq(memories.organizationId, ws.organizationId);
    const byDrizzle = await db.owner.db
      .select({ id: memories.id })
      .from(memories)
      .where(and(inOrg, ...HOLDS_BODY));
    const byPlpgsql = await db.owner.client.unsafe<{ id: string }[]>(
      `select m.id from memories m where m.organization_id = $1 and ${holdsBodySql("m")}`,
      [ws.organizationId],
    );
    expect(names(byDrizzle)).toEqual([
      "expired",
      "held-expired",
      "live",
      "replacement",
      "superseded",
    ]);
    expect(names(byPlpgsql)).toEqual(names(byDrizzle));
  });
});
