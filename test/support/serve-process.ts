import { randomBytes } from "node:crypto";
import { connectDatabase, createApiToken, freePort } from "@north/db";
import { createWorkspace } from "./fixtures.ts";
import { CLI, type Spawned, spawnProcess } from "./processes.ts";

export interface ServeProcess extends Spawned {
  /** The MCP endpoint, `…/mcp`. */
  url: string;
  /** The server's root, for `/readyz`. */
  base: string;
}

/**
 * `north serve` as a real process on `appUrl`, on a free port, with limits high enough that a
 * suite's load is never rate limited; `env` adds or overrides variables.
 */
export async function spawnServe(
  appUrl: string,
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const port = await freePort();
  const server = spawnProcess("bun", [CLI, "serve", "--port", String(port)], {
    DATABASE_APP_URL: appUrl,
    NORTH_AUDIT_KEY: randomBytes(24).toString("hex"),
    NORTH_SECRET_KEY: randomBytes(24).toString("hex"),
    NORTH_PURGE_INTERVAL_S: "0",
    NORTH_WRITES_PER_MINUTE: "100000",
    NORTH_READS_PER_MINUTE: "100000",
    NORTH_PROTOCOL_REQUESTS_PER_MINUTE: "100000",
    LOG_LEVEL: "info",
    ...env,
  });
  const url = (await server.waitFor(/"url":"(http:[^"]+)"/))[1] ?? "";
  return Object.assign(server, { url, base: url.replace(/\/mcp$/, "") });
}

/** `count` workspaces on the database at `ownerUrl`, each with a member token for every tool. */
export async function mintMemberTokens(ownerUrl: string, count: number) {
  const owner = connectDatabase(ownerUrl, { max: 1, applicationName: "north-test-owner" });
  try {
    const tokens: { organizationId: string; token: string }[] = [];
    for (let i = 0; i < count; i++) {
      const ws = await createWorkspace(owner.db, `Faults ${i}`);
      const { token } = await createApiToken(owner.db, {
        organizationId: ws.organizationId,
        userId: ws.member.userId,
        scopes: ["profile:write", "memory:read", "memory:write"],
        expiresAt: null,
      });
      tokens.push({ organizationId: ws.organizationId, token });
    }
    return tokens;
  } finally {
    await owner.close();
  }
}

export { connectClient } from "./mcp-client.ts";

/** `/readyz`: its status code and body. */
export async function readiness(base: string) {
  const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { code: response.status, body: (await response.json()) as Record<string, unknown> };
}
