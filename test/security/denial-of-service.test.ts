import { connectDatabase, type DatabaseHandle } from "@north/db";
import { CAPABILITIES, createRateLimiter, type ToolDefinition } from "@north/mcp-server";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { createTestApp, useTestApp } from "../support/mcp.ts";
import { recall, remember } from "../support/memory-tools.ts";

/**
 * Finding 1: one caller could stall every tenant — an unbounded recall query, no statement
 * timeout, one shared pool. The attacks: a 120,000-word query, a NUL in the query, a statement
 * that would run for seconds, and a batch of calls meant to get past the limiter in one POST.
 */

const READ_ONLY_ANNOTATIONS_FOR_TEST = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const { db, harness } = useTestApp();
let ws: Workspace;

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
});

describe("one caller cannot hold the pool for everyone", () => {
  it("refuses a 120,000-word recall query with a receipt, before any SQL", async () => {
    const client = await harness.connect(ws.member, { scopes: ["memory:read"] });
    const huge = "contrat ".repeat(120_000).trim();
    const result = await recall(client, { query: huge });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^rejected: NORTH_QUERY_TOO_LONG/);
    const [audit] = await db.owner.client`
      select outcome from audit_events where actor_id = ${ws.member.userId}
      order by occurred_at desc limit 1`;
    expect(audit?.outcome).toBe("rejected");
  });

  it("answers a query holding a NUL as a normal recall, not an internal error", async () => {
    const client = await harness.connect(ws.member, { scopes: ["memory:read"] });
    const result = await recall(client, { query: "bail\u0000commercial" });
    expect(result.isError).toBe(false);
    expect(result.structured.mode).toBe("fulltext");
  });

  /**
   * An attack review of decision 039: the query builder kept every repetition of a word, so a
   * 1,000-character recall of one word 500 times was 500 ANDed terms; the planner multiplied
   * their selectivities, expected one row and read the word's whole posting list once per term
   * (1.4 s at 145,000 memories, the statement timeout at about half a million).
   */
  it("plans a query that repeats its words as the words once, in their first order", async () => {
    const [built] = await db.owner.client<
      { q: string; once: string; some: string; someOnce: string }[]
    >`
      select public.north_search_query('en', repeat('bail ', 500), true, 'x:')::text as q,
             public.north_search_query('en', 'bail', true, 'x:')::text as once,
             public.north_search_query('en', repeat('lease bail ', 250), false, 'x:')::text as some,
             public.north_search_query('en', 'lease bail', false, 'x:')::text as "someOnce"`;
    expect(built?.q).toBe(built?.once);
    expect(built?.some).toBe(built?.someOnce);
  });

  /**
   * The same review: a word of 680 CJK characters (2,040 bytes, under to_tsvector's limit) became
   * too long for a tsvector or tsquery once its nine-byte tag was put before it, so storing a
   * memory holding it and recalling it both failed as an internal error. Such a word is not
   * indexed (PostgreSQL drops longer words itself); the rest of the memory is.
   */
  it("stores and recalls a memory holding a word too long to index, instead of an internal error", async () => {
    const client = await harness.connect(ws.member);
    const word = "漢".repeat(680);
    const stored = await remember(client, {
      kind: "fact",
      origin: "stated",
      body: `Tribunal filing note ${word}`,
    });
    expect(stored.isError).toBe(false);
    expect(stored.structured).toMatchObject({ outcome: "created" });
    const byWord = await recall(client, { query: word });
    expect(byWord.isError).toBe(false);
    const byOther = await recall(client, { query: "tribunal filing" });
    expect(byOther.structured.memories.map((m) => m.memory_id)).toContain(
      stored.structured?.memory_id,
    );
  });

  it("cancels a statement that outlives the pool's statement timeout and frees the connection", async () => {
    const pool: DatabaseHandle = connectDatabase(db.appUrl, { max: 1, statementTimeoutMs: 200 });
    try {
      await expect(pool.client`select pg_sleep(5)`).rejects.toMatchObject({ code: "57014" });
      const [row] = await pool.client`select current_setting('statement_timeout') as timeout`;
      expect(row?.timeout).toBe("200ms");
    } finally {
      await pool.close();
    }
  });

  it("answers a call cancelled by the statement timeout with a typed refusal, audited, not an internal error", async () => {
    const pool = connectDatabase(db.appUrl, { max: 2, statementTimeoutMs: 200 });
    const slowTool = {
      name: "north__test_slow",
      title: "Slow tool (test only)",
      description: "Sleeps in PostgreSQL.",
      kind: "read",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      annotations: READ_ONLY_ANNOTATIONS_FOR_TEST,
      async handler(_input, ctx) {
        await ctx.tx.execute(sql`select pg_sleep(5)`);
        return { structured: { ok: true }, text: "slept", audit: { outcome: "read" } };
      },
    } satisfies ToolDefinition<
      z.ZodObject<Record<string, never>>,
      z.ZodObject<{ ok: z.ZodBoolean }>
    >;
    const slow = createTestApp({
      db: { ...db, app: pool },
      capabilities: [{ id: "test-slow", scopes: [], tools: [slowTool], prompts: [], guidance: [] }],
    });
    try {
      const client = await slow.connect(ws.member);
      const result = await client.callTool({ name: "north__test_slow", arguments: {} });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]?.text).toMatch(/^rejected: NORTH_TIMEOUT/);
      const [audit] = await db.owner.client`
        select outcome from audit_events where tool = 'north__test_slow' order by occurred_at desc limit 1`;
      expect(audit?.outcome).toBe("error");
    } finally {
      await slow.close();
      await pool.close();
    }
  });

  it("keeps one workspace's slow calls to its share of the pool; another workspace's read goes first", async () => {
    const sleepy = {
      name: "north__test_sleepy",
      title: "Sleepy tool (test only)",
      description: "Sleeps one second in PostgreSQL.",
      kind: "read",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      annotations: READ_ONLY_ANNOTATIONS_FOR_TEST,
      async handler(_input, ctx) {
        await ctx.tx.execute(sql`select pg_sleep(1)`);
        return { structured: { ok: true }, text: "slept", audit: { outcome: "read" } };
      },
    } satisfies ToolDefinition<
      z.ZodObject<Record<string, never>>,
      z.ZodObject<{ ok: z.ZodBoolean }>
    >;
    const gated = createTestApp({
      db,
      capabilities: [
        ...CAPABILITIES,
        { id: "test-sleepy", scopes: [], tools: [sleepy], prompts: [], guidance: [] },
      ],
      tenantConcurrency: { perOrganization: 2, maxWaitMs: 200 },
    });
    try {
      const attacker = await createWorkspace(db.owner.db);
      const victim = await createWorkspace(db.owner.db);
      const flood = await Promise.all(
        Array.from({ length: 6 }, () => gated.connect(attacker.member)),
      );
      const reader = await gated.connect(victim.member);
      const attack = flood.map((c) => c.callTool({ name: "north__test_sleepy", arguments: {} }));
      const first = await Promise.race([
        reader.callTool({ name: "north__working_profile", arguments: {} }).then(() => "victim"),
        ...attack.map((a) => a.then(() => "attacker")),
      ]);
      expect(first).toBe("victim");
      const results = await Promise.all(attack);
      expect(results.filter((r) => !r.isError)).toHaveLength(2);
      for (const refused of results.filter((r) => r.isError)) {
        expect((refused.content as { text: string }[])[0]?.text).toMatch(/NORTH_RATE_LIMITED/);
      }
      const [row] = await db.owner.client`
        select count(*) filter (where outcome = 'read')::int as read,
               count(*) filter (where outcome = 'rate_limited')::int as limited
        from audit_events where organization_id = ${attacker.organizationId}`;
      expect(row).toEqual({ read: 2, limited: 4 });
    } finally {
      await gated.close();
    }
  });

  it("counts every call of a JSON-RPC batch against the limiter", async () => {
    const limited = createTestApp({
      db,
      limiter: createRateLimiter({ writesPerMinute: 100, readsPerMinute: 3 }),
    });
    try {
      const token = limited.tokenFor(ws.manager, { scopes: ["memory:read"] });
      const batch = Array.from({ length: 20 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "north__memory_recall", arguments: { query: "bail" } },
      }));
      const response = await limited.request("/mcp", {
        method: "POST",
        token,
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(batch),
      });
      const [row] = await db.owner.client`
        select count(*) filter (where outcome = 'read')::int as read,
               count(*) filter (where outcome = 'rate_limited')::int as limited
        from audit_events where actor_id = ${ws.manager.userId} and tool = 'north__memory_recall'`;
      expect(response.status).toBe(200);
      expect(row).toEqual({ read: 3, limited: 17 });
    } finally {
      await limited.close();
    }
  });
});
