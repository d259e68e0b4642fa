import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createApiToken, removeMember } from "@north/db";
import type { buildMcpApp } from "@north/mcp-server";
import type { JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import {
  buildOAuthTestApp,
  type SigningKey,
  startTestIssuer,
  type TestIssuer,
} from "./support/jwt-issuer.ts";
import { connectMcpClient } from "./support/mcp-client.ts";
import { saveAnswer } from "./support/tools.ts";

/**
 * OAuth resource-server mode with a real JWKS endpoint on loopback and real signatures: the
 * authorization server is played by this suite (it signs tokens), North only verifies.
 */

const ISSUER = "https://auth.north.test";
const RESOURCE = "http://localhost/mcp";

let db: TestDatabase;
let ws: Workspace;
let issuer: TestIssuer;
let app: ReturnType<typeof buildMcpApp>;
let sign: TestIssuer["sign"];
let otherKey: SigningKey;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
  issuer = await startTestIssuer(ISSUER, RESOURCE, {
    north_org: ws.organizationId,
    sub: ws.member.userId,
  });
  ({ sign, otherKey } = issuer);
  app = buildOAuthTestApp(db, issuer);
});
afterAll(async () => {
  await issuer.close();
  await db.drop();
});

const listTools = (token?: string) =>
  app.request(RESOURCE, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

const connect = (token: string): Promise<Client> =>
  connectMcpClient(RESOURCE, {
    token,
    fetch: async (url, init) => app.request(String(url), init as RequestInit),
  });

describe("OAuth resource-server mode", () => {
  it("publishes RFC 9728 protected-resource metadata", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const response = await app.request(`http://localhost${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        resource: RESOURCE,
        authorization_servers: [ISSUER],
        // The member scopes only: a manager reaches admin by step-up (decision 030).
        scopes_supported: ["profile:write", "memory:read", "memory:write"],
      });
    }
  });

  it("answers 401 with resource_metadata and the member scopes in the challenge", async () => {
    const response = await listTools();
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource", scope="profile:write memory:read memory:write"',
    );
  });

  it("admits a valid JWT as its member, with the token's scopes, and audits its token id", async () => {
    const token = await sign({ scope: "profile:write openid" });
    const client = await connect(token);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      "north__working_profile",
      "north__working_profile_answer",
    ]);
    expect(
      (await saveAnswer(client, { question: "Via OAuth?", answer: "Yes." })).receipt.outcome,
    ).toBe("created");
    const [row] = await db.owner
      .client`select token_id from audit_events where actor_id = ${ws.member.userId} and outcome = 'created'`;
    expect(row?.token_id).toMatch(/^[0-9a-f-]{36}$/);
    await client.close();
  });

  it.each([
    ["another audience", { aud: "https://elsewhere.example/mcp" }, {}],
    ["another issuer", { iss: "https://evil.example" }, {}],
    ["a user who is not a member", { sub: randomUUID() }, {}],
    ["a member of another organization claimed for this one", { north_org: randomUUID() }, {}],
    ["no organization claim", { north_org: undefined }, {}],
  ])("refuses %s with 401", async (_label, claims, _options) => {
    expect((await listTools(await sign(claims as JWTPayload))).status).toBe(401);
  });

  it("refuses an expired token and one signed by an unknown key", async () => {
    expect((await listTools(await sign({}, { expiresIn: "-1m" }))).status).toBe(401);
    expect((await listTools(await sign({}, { key: otherKey }))).status).toBe(401);
  });

  it("refuses a member who has been removed", async () => {
    const other = await createWorkspace(db.owner.db);
    const token = await sign({ north_org: other.organizationId, sub: other.member.userId });
    expect((await listTools(token)).status).toBe(200);
    await removeMember(db.owner.db, other.member);
    expect((await listTools(token)).status).toBe(401);
  });

  it("answers 403 with a scope challenge for a call outside the token's scopes", async () => {
    const token = await sign({ scope: "memory:read" });
    const response = await app.request(RESOURCE, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "north__working_profile_answer",
          arguments: { question: "Q?", answer: "A." },
        },
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toMatch(
      /resource_metadata=.*error="insufficient_scope", scope="profile:write"/,
    );
  });

  it("keeps accepting North API tokens alongside", async () => {
    const created = await createApiToken(db.owner.db, {
      organizationId: ws.organizationId,
      userId: ws.manager.userId,
      scopes: ["memory:read"],
      expiresAt: null,
    });
    const response = await listTools(created.token);
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain("north__memory_recall");
  });
});
