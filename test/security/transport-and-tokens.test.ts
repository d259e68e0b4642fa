import type { buildMcpApp } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { buildOAuthTestApp, startTestIssuer, type TestIssuer } from "../support/jwt-issuer.ts";

/**
 * Findings 3, 4 and 12, and the exact-origin rule of finding 2, against one real app with the
 * console mounted: JWTs without `exp` were accepted forever and `typ` was not checked; the
 * console's login parsed up to 128 MB before any authentication; health, readiness and
 * metadata answered any Host; any port on our host name counted as our origin.
 */

const ISSUER = "https://auth.north.test";
const RESOURCE = "http://localhost/mcp";

let db: TestDatabase;
let ws: Workspace;
let issuer: TestIssuer;
let app: ReturnType<typeof buildMcpApp>;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
  issuer = await startTestIssuer(ISSUER, RESOURCE, {
    north_org: ws.organizationId,
    sub: ws.member.userId,
  });
  app = buildOAuthTestApp(db, issuer, {
    admin: { fetch: () => new Response("console", { status: 200 }) },
  });
});
afterAll(async () => {
  await issuer.close();
  await db.drop();
});

const listTools = (token: string, headers: Record<string, string> = {}) =>
  app.request(RESOURCE, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${token}`,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

describe("finding 3: access tokens must expire and say what they are", () => {
  it("refuses a JWT without exp, without the at+jwt type, or issued in the future or long ago", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await listTools(await issuer.sign())).status).toBe(200);
    for (const options of [
      { expiresIn: null },
      { typ: null },
      { typ: "JWT" },
      { iat: now + 3600 },
      { iat: now - 3 * 86_400, expiresIn: "1h" },
    ]) {
      expect((await listTools(await issuer.sign({}, options))).status).toBe(401);
    }
  });
});

describe("finding 4: no route parses a large body before authentication", () => {
  it.each([
    "/admin/login",
    "/admin",
    "/healthz",
    "/manifest",
    "/.well-known/oauth-protected-resource",
  ])("answers 413 to a 2 MB POST to %s", async (path) => {
    const response = await app.request(`http://localhost${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: `token=${"x".repeat(2 * 1024 * 1024)}`,
    });
    expect(response.status).toBe(413);
  });
});

describe("finding 12: an unknown Host is refused on every route", () => {
  it.each([
    "/healthz",
    "/readyz",
    "/manifest",
    "/mcp",
    "/admin",
    "/.well-known/oauth-protected-resource",
  ])("answers 403 on %s for a rebinding host", async (path) => {
    const response = await app.request(`http://rebound.example:7410${path}`, {
      headers: { Host: "rebound.example:7410" },
    });
    expect(response.status).toBe(403);
  });
});

describe("finding 2: an origin must match exactly, scheme, host and port", () => {
  it("refuses our host name on another port on /mcp and /admin, and accepts our own origin", async () => {
    const token = await issuer.sign();
    expect((await listTools(token, { Origin: "http://localhost:9999" })).status).toBe(403);
    expect((await listTools(token, { Origin: "http://localhost" })).status).toBe(200);
    const admin = (origin: string) =>
      app.request("http://localhost/admin", { method: "POST", headers: { Origin: origin } });
    expect((await admin("http://localhost:9999")).status).toBe(403);
    expect((await admin("http://localhost")).status).toBe(200);
  });
});
