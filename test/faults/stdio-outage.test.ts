import { randomBytes } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SAVE_TOOL } from "@north/agent-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStdioClient } from "../support/mcp-client.ts";
import { CLI, cleanEnv, ROOT } from "../support/processes.ts";
import {
  type RestartablePostgres,
  startRestartablePostgres,
} from "../support/restartable-postgres.ts";
import { mintMemberTokens } from "../support/serve-process.ts";

/**
 * A stdio session (Claude Desktop's transport) while PostgreSQL is down: it re-checks its token
 * before each call, and that check meeting the outage answers the same retryable
 * NORTH_UNAVAILABLE as an HTTP call, never an internal error; once PostgreSQL is back the same
 * session works again (decision 022).
 */

let pg: RestartablePostgres;
let client: Client;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  const [member] = await mintMemberTokens(pg.ownerUrl, 1);
  client = await connectStdioClient(
    {
      command: "bun",
      args: [CLI, "serve", "--stdio"],
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        DATABASE_APP_URL: pg.appUrl,
        NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
        NORTH_SECRET_KEY: randomBytes(24).toString("hex"),
        NORTH_TOKEN: member?.token ?? "",
        NORTH_DB_CONNECT_TIMEOUT_MS: "1000",
        NORTH_PURGE_INTERVAL_S: "0",
      },
      stderr: "ignore",
    },
    { name: "north-stdio-outage" },
  );
}, 180_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await pg?.close();
});

const save = (n: number) =>
  client.callTool({ name: SAVE_TOOL, arguments: { question: `Q ${n}?`, answer: `A ${n}.` } });

describe("a stdio session while PostgreSQL is down", () => {
  it("answers NORTH_UNAVAILABLE, then works again once PostgreSQL is back", async () => {
    expect((await save(1)).structuredContent).toMatchObject({ outcome: "created" });
    await pg.stop();
    const started = Date.now();
    const refused = await save(2);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("NORTH_UNAVAILABLE");
    await pg.start();
    const deadline = Date.now() + 10_000;
    let again = await save(3);
    while (again.isError && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      again = await save(3);
    }
    expect(again.structuredContent).toMatchObject({ outcome: "created" });
  }, 120_000);
});
