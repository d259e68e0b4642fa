import { createHmac, randomUUID } from "node:crypto";
import { createRateLimiter, type RateLimiter } from "@north/mcp-server";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { createTestApp, TEST_AUDIT_KEY, type TestApp } from "./support/mcp.ts";
import { startRedis, type TestRedis } from "./support/redis.ts";
import { readProfile, saveAnswer } from "./support/tools.ts";

let db: TestDatabase;
let redis: TestRedis;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
  await db.drop();
});

/** A harness whose limiter lives in the private Redis, with a short window for case 14. */
function harnessWith(
  writesPerMinute: number,
  windowSeconds = 60,
): { harness: TestApp; limiter: RateLimiter } {
  const limiter = createRateLimiter({
    writesPerMinute,
    readsPerMinute: 1_000,
    windowSeconds,
    redisUrl: redis.url,
    keyPrefix: `north:rl:${randomUUID().slice(0, 8)}`,
  });
  return { harness: createTestApp({ db, limiter }), limiter };
}

async function auditRows(actorId: string) {
  return db.owner
    .client`select * from audit_events where actor_id = ${actorId} order by occurred_at`;
}

describe("14. the Redis limiter with one write per window", () => {
  it("refuses the second save with a receipt, writes no row, audits it, and lets it through after the window", async () => {
    const { harness, limiter } = harnessWith(1, 2);
    try {
      const ws = await createWorkspace(db.owner.db);
      const client = await harness.connect(ws.member);
      expect(
        (await saveAnswer(client, { question: "First?", answer: "One." })).receipt.outcome,
      ).toBe("created");

      const second = { question: "Second?", answer: "Two.", question_id: "second" };
      const limited = await saveAnswer(client, second);
      expect(limited.isError).toBe(true);
      expect(limited.receipt).toMatchObject({
        outcome: "rejected",
        code: "NORTH_RATE_LIMITED",
        question_id: "second",
      });
      const wait = limited.receipt.retry_after_s ?? 0;
      expect(wait).toBeGreaterThanOrEqual(1);
      expect((await readProfile(client)).entries.map((e) => e.question_id)).not.toContain("second");
      expect((await auditRows(ws.member.userId)).map((r) => r.outcome)).toContain("rate_limited");

      await new Promise((r) => setTimeout(r, wait * 1000 + 200));
      expect((await saveAnswer(client, second)).receipt).toEqual({
        outcome: "created",
        question_id: "second",
        answer_version: 1,
      });
      const rows = await db.owner
        .client`select count(*)::int as n from working_profile_answers where owner_user_id = ${ws.member.userId} and question_id = 'second'`;
      expect(rows[0]?.n).toBe(1);
      expect(limiter.status()).toEqual({ backend: "redis", degraded: false });
    } finally {
      await harness.close();
      await limiter.close();
    }
  });
});

describe("16. the audit sentinel", () => {
  it("keeps question, answer and id text out of audit rows, logs and Redis keys across outcomes", async () => {
    const { harness, limiter } = harnessWith(3);
    try {
      const ws = await createWorkspace(db.owner.db);
      const client = await harness.connect(ws.member);
      const sentinel = `SENTINEL-${randomUUID()}`;
      const id = `ctx-${randomUUID()}`;
      const question = `What about ${sentinel}?`;

      const outcomes = [
        await saveAnswer(client, { question, answer: `I said ${sentinel}.`, question_id: id }),
        await saveAnswer(client, { question, answer: `Changed ${sentinel}.`, question_id: id }),
        await saveAnswer(client, {
          question: `${sentinel}${"x".repeat(500)}`,
          answer: sentinel,
          question_id: id,
        }),
        await saveAnswer(client, { question, answer: `Again ${sentinel}.`, question_id: id }),
      ].map((r) => r.receipt.code ?? r.receipt.outcome);
      expect(outcomes).toEqual([
        "created",
        "NORTH_CONFLICT",
        "NORTH_QUESTION_TOO_LONG",
        "NORTH_RATE_LIMITED",
      ]);

      const rows = await auditRows(ws.member.userId);
      expect(rows.map((r) => r.outcome)).toEqual([
        "created",
        "conflict",
        "rejected",
        "rate_limited",
      ]);
      const fingerprint = createHmac("sha256", TEST_AUDIT_KEY).update(id).digest("hex");
      for (const row of rows) {
        expect(row).toMatchObject({
          target_fingerprint: fingerprint,
          target_length: id.length,
          tool: "north__working_profile_answer",
        });
      }
      const ledger = JSON.stringify(rows);
      const logs = harness.logs.join("");
      expect(logs).toContain('"outcome":"rate_limited"');
      const inspector = new Redis(redis.url);
      const keys = await inspector.keys("*");
      await inspector.quit();
      for (const haystack of [ledger, logs, keys.join("\n")]) {
        expect(haystack).not.toContain(sentinel);
        expect(haystack).not.toContain(id);
      }
      for (const key of keys)
        expect(key).toMatch(
          /^north:rl:[0-9a-f]{8}:(read|write|protocol):[0-9a-f-]{36}:[0-9a-f-]{36}$/,
        );
    } finally {
      await harness.close();
      await limiter.close();
    }
  });
});

describe("every call that reaches a handler is audited exactly once", () => {
  it("writes one row per read and per save, with the request id", async () => {
    const harness = createTestApp({ db });
    try {
      const ws = await createWorkspace(db.owner.db);
      const client = await harness.connect(ws.member);
      await readProfile(client);
      await readProfile(client, { view: "next" });
      await saveAnswer(client, { question: "Q?", answer: "A." });
      const rows = await auditRows(ws.member.userId);
      expect(rows.map((r) => [r.tool, r.outcome])).toEqual([
        ["north__working_profile", "read"],
        ["north__working_profile", "read"],
        ["north__working_profile_answer", "created"],
      ]);
      expect(new Set(rows.map((r) => r.request_id)).size).toBe(3);
      expect(rows.every((r) => r.organization_id === ws.organizationId)).toBe(true);
    } finally {
      await harness.close();
    }
  });
});
