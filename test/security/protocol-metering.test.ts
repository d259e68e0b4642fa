import { randomBytes, randomUUID } from "node:crypto";
import { createApiToken } from "@north/db";
import { createRateLimiter, type RateLimiter } from "@north/mcp-server";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { createTestApp, type TestApp } from "../support/mcp.ts";
import { connectStdioClient, TEST_MCP_CLIENT } from "../support/mcp-client.ts";
import { CLI, cleanEnv, ROOT } from "../support/processes.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";

/**
 * Issue 21, point 8: only `tools/call` was metered. A read-only token pulled about 130 MB/s of
 * tool lists in batches of 100 `tools/list` per POST, slowing every other organisation. The
 * attacks: batches and single requests of tools/list, ping and prompts/*, a body that does not
 * parse, GET /manifest (the same tool list), tools/call to a tool that does not exist (never
 * charged by the read/write budgets), an oversized batch, the same over Redis across two
 * replicas, and over stdio.
 */

let db: TestDatabase;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
});
afterAll(async () => {
  await db.drop();
});

/** The real app with an in-process limiter of `protocol` JSON-RPC messages a minute. */
function appWith(protocol: number, reads = 1_000): TestApp {
  return createTestApp({
    db,
    limiter: createRateLimiter({
      writesPerMinute: 1_000,
      readsPerMinute: reads,
      protocolRequestsPerMinute: protocol,
    }),
  });
}

/** One POST /mcp with a raw JSON-RPC body (a message or a batch). */
function post(harness: TestApp, token: string, body: unknown) {
  return harness.request("/mcp", {
    method: "POST",
    token,
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
}

const message = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
const batchOf = (n: number, method: string, params?: Record<string, unknown>) =>
  Array.from({ length: n }, (_, i) => message(i + 1, method, params));

type RpcError = { id: unknown; error: { code: number; message: string; data?: unknown } };

async function expectRateLimited(response: Response): Promise<unknown> {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const body = (await response.json()) as RpcError | RpcError[];
  for (const answer of Array.isArray(body) ? body : [body]) {
    expect(answer.error.message).toMatch(/^rejected: NORTH_RATE_LIMITED\. .*Wait \d+ s/);
    expect(answer.error.data).toMatchObject({ code: "NORTH_RATE_LIMITED" });
  }
  return body;
}

describe("every JSON-RPC message counts against a per-principal protocol budget", () => {
  it("refuses a batch of tools/list beyond the budget with 429, each id answered, audited, nothing run", async () => {
    const harness = appWith(10);
    try {
      const token = harness.tokenFor(ws.member, { scopes: ["memory:read"] });
      const body = await expectRateLimited(await post(harness, token, batchOf(11, "tools/list")));
      expect((body as RpcError[]).map((answer) => answer.id)).toEqual(
        Array.from({ length: 11 }, (_, i) => i + 1),
      );
      expect(JSON.stringify(body)).not.toContain("north__memory_recall");
      const rows = await db.owner.client`
        select tool, outcome, affected from audit_events
        where actor_id = ${ws.member.userId} and tool = 'mcp_protocol'`;
      expect(rows).toEqual([{ tool: "mcp_protocol", outcome: "rate_limited", affected: 11 }]);
    } finally {
      await harness.close();
    }
  });

  it("counts single tools/list requests one by one, and answers the one over with its id", async () => {
    const harness = appWith(3);
    try {
      const token = harness.tokenFor(ws.member, { scopes: ["memory:read"] });
      for (let id = 1; id <= 3; id++) {
        expect((await post(harness, token, message(id, "tools/list"))).status).toBe(200);
      }
      const refused = await expectRateLimited(await post(harness, token, message(4, "tools/list")));
      expect((refused as RpcError).id).toBe(4);
    } finally {
      await harness.close();
    }
  });

  it("counts ping, prompts/list and prompts/get in the same budget", async () => {
    const harness = appWith(3);
    try {
      const token = harness.tokenFor(ws.member);
      expect((await post(harness, token, message(1, "ping"))).status).toBe(200);
      expect((await post(harness, token, message(2, "prompts/list"))).status).toBe(200);
      expect((await post(harness, token, message(3, "prompts/get", { name: "x" }))).status).toBe(
        200,
      );
      await expectRateLimited(await post(harness, token, message(4, "ping")));
    } finally {
      await harness.close();
    }
  });

  it("counts a body that does not parse as one message", async () => {
    const harness = appWith(1);
    try {
      const token = harness.tokenFor(ws.member);
      const garbage = () =>
        harness.request("/mcp", {
          method: "POST",
          token,
          headers: { "Content-Type": "application/json" },
          body: "{",
        });
      expect((await garbage()).status).toBe(400);
      const refused = await expectRateLimited(await garbage());
      expect((refused as RpcError).id).toBeNull();
    } finally {
      await harness.close();
    }
  });

  it("counts GET /manifest, which carries the tool list, in the same budget", async () => {
    const harness = appWith(2);
    try {
      const token = harness.tokenFor(ws.member);
      expect((await harness.request("/manifest", { token })).status).toBe(200);
      expect((await post(harness, token, message(1, "tools/list"))).status).toBe(200);
      const refused = await harness.request("/manifest", { token });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toMatchObject({ code: "NORTH_RATE_LIMITED" });
    } finally {
      await harness.close();
    }
  });

  it("charges a tools/call one point too, so calls to a tool that does not exist are metered", async () => {
    const harness = appWith(5);
    try {
      const token = harness.tokenFor(ws.member);
      const unknown = batchOf(6, "tools/call", { name: "north__nothing", arguments: {} });
      await expectRateLimited(await post(harness, token, unknown));
    } finally {
      await harness.close();
    }
  });

  it("leaves another member and another organisation their whole budget", async () => {
    const harness = appWith(5);
    try {
      const other = await createWorkspace(db.owner.db);
      const attacker = harness.tokenFor(ws.member, { scopes: ["memory:read"] });
      await expectRateLimited(await post(harness, attacker, batchOf(6, "tools/list")));
      await expectRateLimited(await post(harness, attacker, message(1, "ping")));
      for (const victim of [ws.manager, other.member]) {
        const token = harness.tokenFor(victim);
        const response = await post(harness, token, batchOf(5, "tools/list"));
        expect(response.status).toBe(200);
        expect(((await response.json()) as unknown[]).length).toBe(5);
      }
    } finally {
      await harness.close();
    }
  });

  it("keeps tool-call budgets as they were: each call of a batch charged, tools/list apart", async () => {
    const harness = appWith(100, 3);
    try {
      const tenant = (await createWorkspace(db.owner.db)).member;
      const token = harness.tokenFor(tenant, { scopes: ["memory:read"] });
      const recalls = batchOf(5, "tools/call", {
        name: "north__memory_recall",
        arguments: { query: "bail" },
      });
      expect((await post(harness, token, recalls)).status).toBe(200);
      const [row] = await db.owner.client`
        select count(*) filter (where outcome = 'read')::int as read,
               count(*) filter (where outcome = 'rate_limited')::int as limited
        from audit_events where actor_id = ${tenant.userId} and tool = 'north__memory_recall'`;
      expect(row).toEqual({ read: 3, limited: 2 });
      expect((await post(harness, token, message(9, "tools/list"))).status).toBe(200);
    } finally {
      await harness.close();
    }
  });

  it("refuses a batch of more than 100 messages with 400 at once, uncharged, running none", async () => {
    const harness = appWith(100);
    try {
      const token = harness.tokenFor(ws.member);
      const response = await post(harness, token, batchOf(101, "ping"));
      expect(response.status).toBe(400);
      const body = (await response.json()) as RpcError;
      expect(body).toMatchObject({ id: null, error: { code: -32600 } });
      expect((await post(harness, token, batchOf(100, "ping"))).status).toBe(200);
    } finally {
      await harness.close();
    }
  });
});

describe("the protocol budget in Redis", () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("holds across two replicas, and its keys name only ids, never a body", async () => {
    const prefix = `north:rl:${randomUUID().slice(0, 8)}`;
    const limiters: RateLimiter[] = [0, 1].map(() =>
      createRateLimiter({
        writesPerMinute: 1_000,
        readsPerMinute: 1_000,
        protocolRequestsPerMinute: 4,
        redisUrl: redis.url,
        keyPrefix: prefix,
      }),
    );
    const replicas = limiters.map((limiter) => createTestApp({ db, limiter }));
    try {
      // Until Redis answers, each replica's in-process insurance limiter would count alone.
      while (limiters.some((limiter) => limiter.status().degraded)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const sentinel = `SENTINEL-${randomUUID()}`;
      const [a, b] = replicas as [TestApp, TestApp];
      const onA = a.tokenFor(ws.member);
      const onB = b.tokenFor(ws.member);
      expect((await post(a, onA, batchOf(2, "ping", { note: sentinel }))).status).toBe(200);
      expect((await post(b, onB, message(3, "prompts/get", { name: sentinel }))).status).toBe(200);
      expect((await post(b, onB, message(4, "tools/list", { cursor: sentinel }))).status).toBe(200);
      await expectRateLimited(await post(a, onA, message(5, "ping")));
      const inspector = new Redis(redis.url);
      const keys = await inspector.keys(`${prefix}:*`);
      await inspector.quit();
      expect(keys).toEqual([`${prefix}:protocol:${ws.member.organizationId}:${ws.member.userId}`]);
      expect(keys.join("\n")).not.toContain(sentinel);
      expect(limiters[0]?.status()).toEqual({ backend: "redis", degraded: false });
    } finally {
      for (const replica of replicas) await replica.close();
      for (const limiter of limiters) await limiter.close();
    }
  });
});

describe("a stdio session", () => {
  it("is metered the same way: the message over the budget is refused with NORTH_RATE_LIMITED", async () => {
    const member = (await createWorkspace(db.owner.db)).member;
    const { token } = await createApiToken(db.owner.db, {
      ...member,
      scopes: ["memory:read"],
      expiresAt: null,
    });
    const client = await connectStdioClient(
      {
        command: "bun",
        args: [CLI, "serve", "--stdio"],
        cwd: ROOT,
        env: {
          ...cleanEnv(),
          DATABASE_APP_URL: db.appUrl,
          NORTH_DB_POOLER: db.pooler,
          NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
          NORTH_SECRET_KEY: randomBytes(24).toString("hex"),
          NORTH_TOKEN: token,
          NORTH_PURGE_INTERVAL_S: "0",
          NORTH_PROTOCOL_REQUESTS_PER_MINUTE: "4",
        },
        stderr: "ignore",
      },
      { name: "north-stdio-metering" },
    );
    try {
      // What the handshake took of the budget of four: initialize and notifications/initialized
      // on 2025; nothing on 2026-07-28, where the v2 client sends no message before its first call.
      const handshake = TEST_MCP_CLIENT === "v1" ? 2 : 0;
      // Past the v2 client's cache of tools/list (it carries ttlMs), so each call is a message.
      const fresh = { cacheMode: "bypass" } as Parameters<typeof client.listTools>[1];
      for (let call = handshake; call < 4; call += 1) await client.listTools(undefined, fresh);
      await expect(client.listTools(undefined, fresh)).rejects.toThrow(/NORTH_RATE_LIMITED/);
      const rows = await db.owner.client`
        select outcome from audit_events where actor_id = ${member.userId} and tool = 'mcp_protocol'`;
      expect(rows).toEqual([{ outcome: "rate_limited" }]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
