import { createRateLimiter, type RateLimiter } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp } from "./support/mcp.ts";
import { startRedis, type TestRedis } from "./support/redis.ts";
import { readProfile, saveAnswer } from "./support/tools.ts";

let db: TestDatabase;
let redis: TestRedis;
let limiter: RateLimiter;
let harness: TestApp;
const transitions: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await startRedis();
  limiter = createRateLimiter({
    writesPerMinute: 1_000,
    readsPerMinute: 1_000,
    redisUrl: redis.url,
    onRedisStateChange: (state) => transitions.push(state),
  });
  harness = createTestApp({ db, limiter });
});
afterAll(async () => {
  await harness.close();
  await limiter.close();
  await redis.stop();
  await db.drop();
});

const readiness = async () =>
  (await (await harness.request("/readyz")).json()) as {
    status: string;
    limiter: { redis?: string };
  };

describe("losing Redis in the middle of a run", () => {
  it("keeps saving under the insurance limiter, reports degraded, and loses nothing", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    await expect.poll(() => limiter.status().degraded).toBe(false);
    for (let i = 0; i < 5; i++) {
      expect(
        (await saveAnswer(client, { question: `Before ${i}?`, answer: "Yes." })).receipt.outcome,
      ).toBe("created");
    }

    await redis.stop();
    await expect.poll(() => limiter.status().degraded, { timeout: 5_000 }).toBe(true);
    expect(await readiness()).toMatchObject({
      status: "degraded",
      limiter: { redis: "unreachable" },
    });
    for (let i = 0; i < 5; i++) {
      const saved = await saveAnswer(client, { question: `During ${i}?`, answer: "Yes." });
      expect(saved.isError).toBe(false);
      expect(saved.receipt.outcome).toBe("created");
    }

    await redis.restart();
    await expect.poll(() => limiter.status().degraded, { timeout: 10_000 }).toBe(false);
    expect((await readiness()).status).toBe("ok");
    expect((await saveAnswer(client, { question: "After?", answer: "Yes." })).receipt.outcome).toBe(
      "created",
    );

    expect((await readProfile(client)).entries).toHaveLength(11);
    expect(transitions).toContain("unreachable");
    expect(transitions.at(-1)).toBe("ready");
  });
});
