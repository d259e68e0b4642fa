import { createFingerprinter, rememberMemory, withTenant } from "@north/db";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { TEST_AUDIT_KEY, useTestApp } from "./support/mcp.ts";
import { forget, held, remember } from "./support/memory-tools.ts";

/** SPEC §5: remembering is idempotent — a retried call never duplicates (issue 13). */

const { db, harness } = useTestApp();
let ws: Workspace;

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
});

const about = (id: string) =>
  ({
    kind: "observation",
    body: `${id} answers emails within the hour.`,
    origin: "stated",
    subject_type: "person",
    subject_id: id,
  }) as const;

const structured = (result: { structured?: Record<string, unknown> }) =>
  result.structured as { outcome: string; memory_id: string; expires_at: string };

async function rowsAbout(id: string): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from memories where subject_id = ${id}`;
  return row?.n ?? 0;
}

describe("remembering is idempotent", () => {
  it("answers a lost-response retry with noop and the same memory_id", async () => {
    const client = await harness.connect(ws.member);
    const first = structured(await remember(client, about("Agnès Roux")));
    expect(first.outcome).toBe("created");
    const retry = await remember(client, about("Agnès Roux"));
    expect(structured(retry)).toEqual({ ...first, outcome: "noop" });
    expect(retry.isError).toBe(false);
    expect(retry.text).toMatch(/^noop: already held/);
    expect(await rowsAbout("Agnès Roux")).toBe(1);
    const [audit] = await db.owner.client`
      select outcome from audit_events where tool = 'north__memory_remember' order by occurred_at desc limit 1`;
    expect(audit).toEqual({ outcome: "noop" });
  });

  it("stores one memory for 8 parallel identical remembers", async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => harness.connect(ws.member)));
    const results = (
      await Promise.all(clients.map((client) => remember(client, about("Bruno Petit"))))
    ).map(structured);
    expect(results.filter((r) => r.outcome === "created")).toHaveLength(1);
    expect(results.filter((r) => r.outcome === "noop")).toHaveLength(7);
    expect(new Set(results.map((r) => r.memory_id)).size).toBe(1);
    expect(await rowsAbout("Bruno Petit")).toBe(1);
  });

  it("stores a memory that differs in body, origin, subject or author", async () => {
    const client = await harness.connect(ws.member);
    const base = about("Chloé Garnier");
    const ids = new Set<string>();
    for (const variant of [
      base,
      { ...base, body: `${base.body} Usually.` },
      { ...base, origin: "inferred" as const },
      { ...base, subject_id: "Chloé Garnier-Lemaire" },
    ]) {
      const result = structured(await remember(client, variant));
      expect(result.outcome).toBe("created");
      ids.add(result.memory_id);
    }
    const colleague = await harness.connect(ws.manager);
    const byColleague = structured(await remember(colleague, base));
    expect(byColleague.outcome).toBe("created");
    ids.add(byColleague.memory_id);
    expect(ids.size).toBe(5);
  });

  it("stores it again once the earlier one was erased or is a day old", async () => {
    const client = await harness.connect(ws.member);
    const first = structured(await remember(client, about("Denis Faure")));
    await forget(client, { memory_id: first.memory_id });
    const afterErasure = structured(await remember(client, about("Denis Faure")));
    expect(afterErasure.outcome).toBe("created");
    expect(afterErasure.memory_id).not.toBe(first.memory_id);

    await db.owner.client`
      update memories set created_at = now() - interval '25 hours' where id = ${afterErasure.memory_id}`;
    const dayLater = structured(await remember(client, about("Denis Faure")));
    expect(dayLater.outcome).toBe("created");
    const listed = await held(client, "person", "Denis Faure");
    expect(listed.structured.memories.filter((m) => m.body !== null)).toHaveLength(2);
  });

  it("makes a second identical remember wait for the first's commit, then answer noop", async () => {
    // Deterministic interleaving on the store: the first transaction has inserted but not
    // committed when the second starts; the second must not insert a duplicate meanwhile.
    const fingerprint = createFingerprinter(TEST_AUDIT_KEY);
    const params = {
      author: ws.member,
      kind: "fact" as const,
      body: "The Versailles court closes its registry at 4 p.m.",
      origin: "stated" as const,
      runId: "test:interleaving",
      fingerprint: (canonical: string) => fingerprint(canonical).fingerprint,
    };
    let inserted: () => void = () => {};
    const firstInserted = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = withTenant(db.app.db, ws.member, async (tx) => {
      const result = await rememberMemory(tx, params);
      inserted();
      await released;
      return result;
    });
    await firstInserted;
    let secondDone = false;
    const second = withTenant(db.app.db, ws.member, (tx) => rememberMemory(tx, params)).then(
      (result) => {
        secondDone = true;
        return result;
      },
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(secondDone).toBe(false);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a.outcome).toBe("created");
    expect(b.outcome).toBe("noop");
    expect(b.outcome !== "rejected" && a.outcome !== "rejected" && b.memoryId === a.memoryId).toBe(
      true,
    );
  });
});

/**
 * The look-up that makes a remember idempotent finds an identical memory of the last day by its
 * identity's index (organisation, author, md5 of the body), not by reading the author's day:
 * before, it was a sequential scan of the table, 67 ms at 300,000 memories and growing with it,
 * in every remember's transaction (docs/benchmarks.md, "remember at a million").
 */
describe("the idempotence look-up", () => {
  it("reads the identity's index, not the author's day of memories", async () => {
    const busy = await createWorkspace(db.owner.db);
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      select ${busy.member.organizationId}, ${busy.member.userId}, 'fact', 'stated',
             'Filing note ' || g || ' for the day', 'seed', now() + interval '90 days'
      from generate_series(1, 20000) g`;
    await db.owner.client`vacuum analyze memories`;
    const counters = async () => {
      await db.owner.client`select pg_stat_clear_snapshot()`;
      const [row] = await db.owner.client<{ seq: string; identity: string | null }[]>`
        select t.seq_scan as seq,
               (select idx_scan from pg_stat_user_indexes where indexrelname = 'memories_identity') as identity
        from pg_stat_user_tables t where t.relname = 'memories'`;
      return { seq: Number(row?.seq), identity: Number(row?.identity ?? 0) };
    };
    const fingerprint = createFingerprinter(TEST_AUDIT_KEY);
    const rememberAs = (body: string) =>
      withTenant(db.app.db, busy.member, async (tx) => {
        const result = await rememberMemory(tx, {
          author: busy.member,
          kind: "fact",
          body,
          origin: "stated",
          runId: "test:identity-index",
          fingerprint: (canonical: string) => fingerprint(canonical).fingerprint,
        });
        await tx.execute(sql`select pg_stat_force_next_flush()`);
        return result;
      });
    const before = await counters();
    const created = await rememberAs("Filing note 20001 for the day");
    const after = await counters();
    expect(created.outcome).toBe("created");
    expect(after.identity).toBeGreaterThan(before.identity);
    expect(after.seq).toBe(before.seq);
    // The index narrows; the body itself still decides: the same words again are a noop.
    const again = await rememberAs("Filing note 20001 for the day");
    expect(again.outcome).toBe("noop");
  });
});
