import {
  CAPABILITIES,
  type Capability,
  createRateLimiter,
  type Embedder,
  type EmbedderStatus,
  LOOPBACK_HOSTS,
  type ToolDefinition,
} from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createHashingEmbedder } from "./support/embedder.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp, useTestApp } from "./support/mcp.ts";
import { remember } from "./support/memory-tools.ts";
import { startRedis, type TestRedis } from "./support/redis.ts";
import { readProfile, saveAnswer } from "./support/tools.ts";

/**
 * `GET /metrics` (SPEC §10, issue 14 point 6) on the real app: counters, histograms and gauges
 * follow what the app does, labels carry only tool names and enums, and access follows the Host
 * guard and the token rule (decision 025).
 */

/** A tool that holds its tenant transaction until released: the pool gauges and latencies. */
const holds = new Set<() => void>();
const holdInput = z.object({
  ms: z.number().int().min(0).optional().describe("hold this long; unset, until released"),
});
const holdOutput = z.object({});
const holdTool = {
  name: "test__hold",
  title: "Hold",
  description: "Test only: holds a transaction open.",
  kind: "read",
  inputSchema: holdInput,
  outputSchema: holdOutput,
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async handler(input) {
    await new Promise<void>((resolve) => {
      if (input.ms !== undefined) setTimeout(resolve, input.ms);
      else holds.add(resolve);
    });
    return { structured: {}, text: "held", audit: { outcome: "read" } };
  },
} satisfies ToolDefinition<typeof holdInput, typeof holdOutput>;
const holding: Capability = {
  id: "test-hold",
  scopes: ["memory:read"],
  tools: [holdTool],
  prompts: [],
  guidance: [],
};

const { db, harness } = useTestApp({
  metrics: { loopback: true },
  capabilities: [...CAPABILITIES, holding],
  // Enough for one workspace to fill the test pool and queue behind it.
  tenantConcurrency: { perOrganization: 100, maxWaitMs: 10_000 },
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = value as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name and these labels (among others); 0 when absent. */
function sample(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} is not one sample`);
  return found[0]?.value ?? 0;
}

async function scrape(app: TestApp = harness, init: RequestInit & { token?: string } = {}) {
  const response = await app.request("/metrics", init);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await response.text());
}

async function eventually(check: () => Promise<void>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const SAVE = "north__working_profile_answer";
const READ = "north__working_profile";

describe("/metrics counts what the app does", () => {
  it("counts each tool call under its tool and outcome", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const before = await scrape();

    const first = await saveAnswer(client, { question: "How do you draft?", answer: "Short." });
    expect(first.receipt.outcome).toBe("created");
    await saveAnswer(client, { question: "Which court?", answer: "Paris." });
    const stale = await saveAnswer(client, {
      question: "How do you draft?",
      answer: "Shorter.",
      question_id: first.receipt.question_id ?? "",
      expected_version: 7,
    });
    expect(stale.receipt.outcome).toBe("conflict");
    await readProfile(client);
    const invalid = await client.callTool({ name: SAVE, arguments: { question: "No answer?" } });
    expect(invalid.isError).toBe(true);

    const after = await scrape();
    const delta = (tool: string, outcome: string) =>
      sample(after, "north_tool_calls_total", { tool, outcome }) -
      sample(before, "north_tool_calls_total", { tool, outcome });
    expect(delta(SAVE, "created")).toBe(2);
    expect(delta(SAVE, "conflict")).toBe(1);
    expect(delta(SAVE, "invalid_arguments")).toBe(1);
    expect(delta(SAVE, "read")).toBe(0);
    expect(delta(READ, "read")).toBe(1);
    expect(delta(READ, "created")).toBe(0);
  });

  it("times every call in its tool's latency histogram", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const before = await scrape();
    const bucket = (s: Sample[], le: string) =>
      sample(s, "north_tool_call_duration_seconds_bucket", { tool: holdTool.name, le });

    await client.callTool({ name: holdTool.name, arguments: { ms: 300 } });

    const after = await scrape();
    const count = (s: Sample[]) =>
      sample(s, "north_tool_call_duration_seconds_count", { tool: holdTool.name });
    const sum = (s: Sample[]) =>
      sample(s, "north_tool_call_duration_seconds_sum", { tool: holdTool.name });
    expect(count(after) - count(before)).toBe(1);
    expect(sum(after) - sum(before)).toBeGreaterThanOrEqual(0.3);
    // 300 ms: above the 0.25 s bucket, inside the 2.5 s one.
    expect(bucket(after, "0.25") - bucket(before, "0.25")).toBe(0);
    expect(bucket(after, "2.5") - bucket(before, "2.5")).toBe(1);
    expect(bucket(after, "+Inf") - bucket(before, "+Inf")).toBe(1);
    // Another tool's histogram did not move.
    expect(
      sample(after, "north_tool_call_duration_seconds_count", { tool: READ }) -
        sample(before, "north_tool_call_duration_seconds_count", { tool: READ }),
    ).toBe(0);
  });

  it("shows the app pool's connections in use and the transactions waiting for one", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const idle = await scrape();
    const max = sample(idle, "north_db_pool_max");
    expect(max).toBe(db.app.client.options.max);
    expect(sample(idle, "north_db_pool_in_use")).toBe(0);
    expect(sample(idle, "north_db_pool_waiting")).toBe(0);

    // One call more than the pool holds: every connection in use, one call waiting for one.
    const calls = Array.from({ length: max + 1 }, () =>
      client.callTool({ name: holdTool.name, arguments: {} }),
    );
    await eventually(async () => {
      const busy = await scrape();
      expect(sample(busy, "north_db_pool_in_use")).toBe(max);
      expect(sample(busy, "north_db_pool_waiting")).toBe(1);
    });
    // Release until all of them have run.
    await eventually(async () => {
      for (const release of holds) release();
      holds.clear();
      const done = await scrape();
      expect(sample(done, "north_db_pool_in_use")).toBe(0);
      expect(sample(done, "north_db_pool_waiting")).toBe(0);
    });
    await Promise.all(calls);
  });

  it("never labels with a body, an id, an email or a tool name it does not serve", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await harness.connect(ws.member);
    const body = "Maître Durand prefers plain French in every brief (marker-7f3a)";
    expect((await remember(client, { kind: "fact", body, origin: "stated" })).isError).toBe(false);
    await client.callTool({ name: "north__jane.doe@example.test", arguments: {} }).catch(() => {});

    const text = await (await harness.request("/metrics")).text();
    for (const secret of ["marker-7f3a", "Durand", "jane.doe", ws.organizationId, ws.member.userId])
      expect(text).not.toContain(secret);
    const tools = new Set([...CAPABILITIES, holding].flatMap((c) => c.tools.map((t) => t.name)));
    const calls = parse(text).filter((s) => s.name === "north_tool_calls_total");
    expect(calls.length).toBeGreaterThan(0);
    for (const sample of calls) {
      expect(Object.keys(sample.labels).sort()).toEqual(["outcome", "tool"]);
      expect(tools).toContain(sample.labels.tool);
      expect(sample.labels.outcome).toMatch(/^[a-z_]+$/);
    }
    expect(sample(parse(text), "north_tool_calls_total", { tool: "north__memory_remember" })).toBe(
      1,
    );
  });

  it("reports the in-process limiter as mode memory, not degraded", async () => {
    const samples = await scrape();
    expect(sample(samples, "north_rate_limiter_mode", { mode: "memory" })).toBe(1);
    expect(sample(samples, "north_rate_limiter_mode", { mode: "redis" })).toBe(0);
    expect(sample(samples, "north_rate_limiter_degraded")).toBe(0);
  });

  it("has no embedder series when no embedder is configured", async () => {
    const samples = await scrape();
    expect(samples.some((s) => s.name.startsWith("north_embedder_"))).toBe(false);
    expect(sample(samples, "process_resident_memory_bytes")).toBeGreaterThan(0);
  });
});

describe("/metrics follows the limiter's mode", () => {
  let redis: TestRedis;
  let running = false;
  beforeAll(async () => {
    redis = await startRedis();
    running = true;
  });
  afterAll(async () => {
    // A second stop() would wait for an exit that already happened.
    if (running) await redis.stop();
  });

  it("says redis while Redis answers, memory and degraded once it is gone", async () => {
    const limiter = createRateLimiter({
      writesPerMinute: 100,
      readsPerMinute: 100,
      redisUrl: redis.url,
      keyPrefix: "north:rl:metrics",
    });
    const app = createTestApp({ db, limiter, metrics: { loopback: true } });
    try {
      await eventually(async () => {
        const samples = await scrape(app);
        expect(sample(samples, "north_rate_limiter_mode", { mode: "redis" })).toBe(1);
        expect(sample(samples, "north_rate_limiter_mode", { mode: "memory" })).toBe(0);
        expect(sample(samples, "north_rate_limiter_degraded")).toBe(0);
      });
      await redis.stop();
      running = false;
      await eventually(async () => {
        const samples = await scrape(app);
        expect(sample(samples, "north_rate_limiter_mode", { mode: "redis" })).toBe(0);
        expect(sample(samples, "north_rate_limiter_mode", { mode: "memory" })).toBe(1);
        expect(sample(samples, "north_rate_limiter_degraded")).toBe(1);
      });
    } finally {
      await app.close();
      await limiter.close();
    }
  });
});

describe("/metrics follows the embedder's health", () => {
  it("shows ok, then degraded with the failure's class, then ok again", async () => {
    let status: EmbedderStatus = { state: "ok", model: "test-model" };
    const embedder: Embedder = { embed: createHashingEmbedder().embed, status: () => status };
    const app = createTestApp({ db, embedder, metrics: { loopback: true } });
    const failures = (s: Sample[]) =>
      Object.fromEntries(
        s.filter((x) => x.name === "north_embedder_failure").map((x) => [x.labels.class, x.value]),
      );
    try {
      let samples = await scrape(app);
      expect(sample(samples, "north_embedder_state", { state: "ok" })).toBe(1);
      expect(sample(samples, "north_embedder_state", { state: "degraded" })).toBe(0);
      expect(Object.values(failures(samples))).toEqual([0, 0, 0, 0, 0]);

      status = {
        state: "degraded",
        class: "rate_limited",
        since: "2026-01-01T00:00:00Z",
        model: "m",
      };
      samples = await scrape(app);
      expect(sample(samples, "north_embedder_state", { state: "ok" })).toBe(0);
      expect(sample(samples, "north_embedder_state", { state: "degraded" })).toBe(1);
      expect(failures(samples)).toEqual({
        rate_limited: 1,
        credential_refused: 0,
        rejected: 0,
        unreachable: 0,
        timeout: 0,
      });

      status = { ...status, class: "timeout" };
      samples = await scrape(app);
      expect(failures(samples)).toMatchObject({ rate_limited: 0, timeout: 1 });

      status = { state: "ok", model: "test-model" };
      samples = await scrape(app);
      expect(sample(samples, "north_embedder_state", { state: "ok" })).toBe(1);
      expect(Object.values(failures(samples))).toEqual([0, 0, 0, 0, 0]);
    } finally {
      await app.close();
    }
  });
});

describe("who may read /metrics", () => {
  const TOKEN = "metrics-token-0123456789abcdef";

  it("refuses a foreign Host and a foreign Origin, like every other route", async () => {
    const foreignHost = await harness.request("/metrics", { headers: { Host: "evil.example" } });
    expect(foreignHost.status).toBe(403);
    expect(await foreignHost.text()).not.toContain("north_tool_calls_total");
    const foreignOrigin = await harness.request("/metrics", {
      headers: { Origin: "https://evil.example" },
    });
    expect(foreignOrigin.status).toBe(403);
  });

  it("answers 404 outside loopback when no token is configured, and by default", async () => {
    const outside = createTestApp({ db, metrics: { loopback: false } });
    expect((await outside.request("/metrics")).status).toBe(404);
    expect((await outside.request("/metrics", { token: TOKEN })).status).toBe(404);
    const unset = createTestApp({ db });
    expect((await unset.request("/metrics")).status).toBe(404);
    await Promise.all([outside.close(), unset.close()]);
  });

  it("asks for the token outside loopback: 401 without it or with another, 200 with it", async () => {
    const outside = createTestApp({ db, metrics: { loopback: false, token: TOKEN } });
    const missing = await outside.request("/metrics");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect((await outside.request("/metrics", { token: `${TOKEN}x` })).status).toBe(401);
    expect((await outside.request("/metrics", { token: TOKEN.slice(1) })).status).toBe(401);
    await scrape(outside, { token: TOKEN });
    await outside.close();
  });

  it("asks for the token on loopback too when the server answers a public Host name", async () => {
    const proxied = createTestApp({
      db,
      metrics: { loopback: true, token: TOKEN },
      allowedHosts: [...LOOPBACK_HOSTS, "north.example.com"],
    });
    expect((await proxied.request("/metrics")).status).toBe(401);
    expect(
      (await proxied.request("/metrics", { headers: { Host: "north.example.com" } })).status,
    ).toBe(401);
    await scrape(proxied, { token: TOKEN });
    await proxied.close();
  });

  it("needs no token on a loopback-only server", async () => {
    await scrape(harness);
  });
});
