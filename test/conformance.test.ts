import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import {
  buildMcpApp,
  createLogger,
  createRateLimiter,
  type HttpServerHandle,
  startHttpServer,
} from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { TEST_AUDIT_KEY } from "./support/mcp.ts";

/**
 * The official conformance scenarios against the real server on loopback. The conformance
 * runner sends no credentials, so this suite (and only this suite) builds the app with a
 * resolver that admits one fixed test principal; the product has no unauthenticated mode.
 */

const SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "prompts-list",
  "dns-rebinding-protection",
];
const ROOT = path.resolve(import.meta.dirname, "..");
const RUNNER = path.join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

let db: TestDatabase;
let server: HttpServerHandle;

beforeAll(async () => {
  db = await createTestDatabase();
  const ws = await createWorkspace(db.owner.db);
  const app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: async () => ({
      organizationId: ws.organizationId,
      userId: ws.member.userId,
      role: "member",
      scopes: ["profile:write", "memory:read", "memory:write"],
      tokenId: null,
    }),
    limiter: createRateLimiter({
      writesPerMinute: 1_000,
      readsPerMinute: 1_000,
      protocolRequestsPerMinute: 1_000,
    }),
    logger: createLogger({ level: "silent" }),
    auditKey: TEST_AUDIT_KEY,
  });
  server = await startHttpServer(app.fetch, { port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await server.close();
  await db.drop();
});

describe("MCP conformance", () => {
  it.each(SCENARIOS)(
    "passes %s",
    async (scenario) => {
      const url = `http://localhost:${server.port}/mcp`;
      const run = await promisify(execFile)(
        "bun",
        [RUNNER, "server", "--url", url, "--scenario", scenario],
        {
          cwd: ROOT,
        },
      ).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          output: e.stdout + e.stderr,
        }),
      );
      expect(run.output).not.toMatch(/FAIL|✗/);
      expect(run.code, run.output).toBe(0);
    },
    60_000,
  );
});
