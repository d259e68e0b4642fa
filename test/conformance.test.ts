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
 * The official conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, run with Bun:
 * it needs Node 22 APIs) against the real server on loopback, every server scenario of each
 * revision North speaks (`--suite all`), with an expected-failures file per revision listing each
 * scenario (or single check) that does not apply to North and why: a new failure fails the run,
 * and so does a listed one that starts to pass. The runner sends no credentials, so this suite
 * (and only this suite) builds the app with a resolver that admits one fixed test principal; the
 * product has no unauthenticated mode. Its limiter is wide: the whole suite is hundreds of calls.
 */

const REVISIONS = ["2026-07-28", "2025-11-25"];
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
      writesPerMinute: 100_000,
      readsPerMinute: 100_000,
      protocolRequestsPerMinute: 100_000,
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
  it.each(REVISIONS)(
    "passes every server scenario of %s that applies to North",
    async (revision) => {
      const url = `http://localhost:${server.port}/mcp`;
      const baseline = path.join(ROOT, `test/conformance/expected-failures-${revision}.yml`);
      const args = ["server", "--url", url, "--spec-version", revision, "--suite", "all"];
      const run = await promisify(execFile)(
        "bun",
        [RUNNER, ...args, "--expected-failures", baseline],
        { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
      ).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          output: e.stdout + e.stderr,
        }),
      );
      expect(run.code, run.output).toBe(0);
      // The scenarios that matter most to North ran, and passed with checks.
      const passed = (scenario: string) =>
        expect(run.output).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
      for (const scenario of ["tools-list", "prompts-list", "dns-rebinding-protection"]) {
        passed(scenario);
      }
      passed(revision === "2026-07-28" ? "http-header-validation" : "server-initialize");
    },
    300_000,
  );
});
