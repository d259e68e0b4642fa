import { connectDatabase, createApiToken, type DatabaseHandle } from "@north/db";
import { buildMcpApp, createAuthResolver, createRateLimiter } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import {
  postMcp,
  replyOf,
  jsonRpcRequest as request,
  profileSave as save,
} from "../support/mcp-requests.ts";
import {
  type RestartablePostgres,
  startRestartablePostgres,
} from "../support/restartable-postgres.ts";

/**
 * Decision 036 while PostgreSQL is down: a remembered API token's tool call is charged its read
 * or write point before its transaction, which is what proves the credential. When the outage
 * stops that transaction, nothing proved the credential, and a request looked up from the start
 * would have met the outage before the limiter: the point goes back, so an outage never spends
 * a member's budget. A PostgreSQL of this suite's own, stopped and started; the real resolver
 * on the app login role, the real app.
 */

const WRITES_PER_MINUTE = 3;

let pg: RestartablePostgres;
let owner: DatabaseHandle;
let appDb: DatabaseHandle;
let app: ReturnType<typeof buildMcpApp>;
let token: string;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  owner = connectDatabase(pg.ownerUrl, { max: 2 });
  const ws = await createWorkspace(owner.db, "Outage");
  ({ token } = await createApiToken(owner.db, {
    organizationId: ws.organizationId,
    userId: ws.member.userId,
    scopes: ["profile:write", "memory:read", "memory:write"],
    expiresAt: null,
  }));
  appDb = connectDatabase(pg.appUrl, { max: 4, connectTimeoutMs: 1_000 });
  app = buildMcpApp({
    db: appDb.db,
    resolvePrincipal: createAuthResolver(appDb.db),
    limiter: createRateLimiter({
      writesPerMinute: WRITES_PER_MINUTE,
      readsPerMinute: 1_000,
      protocolRequestsPerMinute: 1_000,
    }),
    logger: capturingLogger().logger,
    auditKey: TEST_AUDIT_KEY,
  });
}, 120_000);

afterAll(async () => {
  await appDb?.close();
  await owner?.close();
  await pg?.close();
});

let ids = 0;
/** The receipt's refusal code or outcome of a save, or the HTTP status when there is none. */
async function saved(): Promise<string> {
  const response = await postMcp(app, token, save(`Asked during the outage test ${++ids}?`));
  const receipt = (await replyOf(response))?.result?.structuredContent;
  return receipt?.code ?? receipt?.outcome ?? `HTTP ${response.status}`;
}

describe("a remembered API token while PostgreSQL is down (decision 036)", () => {
  it("calls the outage stopped spend nothing of the member's write budget", async () => {
    // Looked up and remembered: one of the minute's three writes.
    expect(await saved()).toBe("created");
    await pg.stop();
    try {
      for (let i = 0; i < WRITES_PER_MINUTE; i++) expect(await saved()).not.toBe("created");
    } finally {
      await pg.start();
    }
    // Back up (a listing is looked up and spends no write), the two writes left still save.
    await expect
      .poll(async () => (await postMcp(app, token, request("tools/list"))).status, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe(200);
    expect(await saved()).toBe("created");
    expect(await saved()).toBe("created");
    // And the budget still holds: the minute's fourth write is refused.
    expect(await saved()).toBe("NORTH_RATE_LIMITED");
  }, 120_000);
});
