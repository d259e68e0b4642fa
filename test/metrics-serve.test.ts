import { randomBytes } from "node:crypto";
import { SAVE_TOOL } from "@north/agent-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import {
  connectClient,
  mintMemberTokens,
  type ServeProcess,
  spawnServe,
} from "./support/serve-process.ts";

/**
 * `/metrics` on a real `north serve` (decision 025): open on a server bound to loopback, behind
 * NORTH_METRICS_TOKEN on one bound elsewhere, absent (404) there without a token.
 */

const TOKEN = randomBytes(24).toString("hex");
let db: TestDatabase;
const servers: ServeProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const server of servers) await server.interrupt();
  await db?.drop();
});

async function serve(env: Record<string, string>) {
  const server = await spawnServe(db.appUrl, { NORTH_DB_POOLER: db.pooler, ...env });
  servers.push(server);
  return server;
}

/** `/metrics` asked through loopback, as a scraper on the host would. */
const scrape = (server: ServeProcess, token?: string) =>
  fetch(`${server.base.replace(/\/\/[^/:]+:/, "//127.0.0.1:")}/metrics`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });

describe("GET /metrics on north serve", () => {
  it("is open on a loopback server and counts the calls it served", async () => {
    const server = await serve({});
    const [member] = await mintMemberTokens(db.ownerUrl, 1);
    const client = await connectClient(server.url, member?.token ?? "", 20_000);
    await client.callTool({ name: SAVE_TOOL, arguments: { question: "Q?", answer: "A." } });
    await client.close();
    const response = await scrape(server);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toMatch(
      new RegExp(`north_tool_calls_total\\{tool="${SAVE_TOOL}",outcome="created"\\} 1`),
    );
    expect(text).toContain('north_rate_limiter_mode{mode="memory"} 1');
  });

  it("on a server bound beyond loopback, needs NORTH_METRICS_TOKEN, and is absent without one", async () => {
    const guarded = await serve({ NORTH_HOST: "0.0.0.0", NORTH_METRICS_TOKEN: TOKEN });
    expect((await scrape(guarded)).status).toBe(401);
    expect((await scrape(guarded, `${TOKEN}x`)).status).toBe(401);
    expect((await scrape(guarded, TOKEN)).status).toBe(200);

    const open = await serve({ NORTH_HOST: "0.0.0.0" });
    expect((await scrape(open)).status).toBe(404);
  });
});
