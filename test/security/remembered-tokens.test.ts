import {
  addMember,
  createApiToken,
  removeMember,
  revokeApiToken,
  setMemberRole,
  type Tenant,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createRateLimiter,
  type RateLimiter,
  type Scope,
} from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import {
  toolCall as callTool,
  postMcp,
  jsonRpcRequest as request,
  profileSave as save,
} from "../support/mcp-requests.ts";
import { auditRowsOf, profileRowsOf } from "../support/rows.ts";

/**
 * Decision 036: North remembers the principal of an API token it looked up, and a tool call
 * then proves it inside its own transaction instead of looking it up first. These are the
 * attacks on that: a token revoked, expired or whose member was removed or demoted after North
 * remembered it must get exactly what it would get had North looked it up — 401, nothing
 * written, nothing audited — on every kind of request, not only on the tool call that proves it.
 * The real resolver (`createAuthResolver`) on the app login role, the real app.
 */

let db: TestDatabase;
let ws: Workspace;
let limiter: RateLimiter;
let app: ReturnType<typeof buildMcpApp>;
let logs: string[];

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db);
  limiter = createRateLimiter({
    writesPerMinute: 10_000,
    readsPerMinute: 10_000,
    protocolRequestsPerMinute: 10_000,
  });
  const captured = capturingLogger("debug");
  logs = captured.logs;
  app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db),
    limiter,
    logger: captured.logger,
    auditKey: TEST_AUDIT_KEY,
  });
});
afterAll(async () => {
  await db?.drop();
});

const PROFILE: Scope[] = ["profile:write", "memory:read", "memory:write"];

async function tokenFor(tenant: Tenant, options: { expiresAt?: Date; scopes?: Scope[] } = {}) {
  return createApiToken(db.owner.db, {
    organizationId: tenant.organizationId,
    userId: tenant.userId,
    scopes: options.scopes ?? PROFILE,
    expiresAt: options.expiresAt ?? null,
  });
}

let ids = 0;
const post = (token: string, body: unknown) => postMcp(app, token, body);

const profileRows = (tenant: Tenant) => profileRowsOf(db.owner.client, tenant);
const auditRows = (tenant: Tenant) => auditRowsOf(db.owner.client, tenant);

/** A member of the workspace with a token North has just looked up and remembered. */
async function rememberedMember(label: string, options: { expiresAt?: Date } = {}) {
  const member = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: `${label}-${++ids}@example.test`,
  });
  const tenant = { organizationId: member.organizationId, userId: member.userId };
  const token = await tokenFor(tenant, options);
  const first = await post(token.token, save(`First question of ${label}?`));
  expect(first.status).toBe(200);
  expect(await profileRows(tenant)).toBe(1);
  return { tenant, token };
}

describe("a remembered API token whose grant ended (decision 036)", () => {
  it("remembers: the second request of a token comes back unproven, the first looked up", async () => {
    const { token } = await tokenFor(ws.member);
    const resolve = createAuthResolver(db.app.db);
    const asked = new Request("http://localhost/mcp", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    const first = await resolve(asked, { mayRemember: true });
    expect(first?.unproven).toBeUndefined();
    const second = await resolve(asked, { mayRemember: true });
    expect(second?.unproven).toEqual({ apiTokenHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(second?.userId).toBe(ws.member.userId);
    // Only where the caller proves it: every other route looks the token up.
    expect((await resolve(asked))?.unproven).toBeUndefined();
  });

  it("revoked: the next save is refused 401 and writes neither a row nor an audit row", async () => {
    const { tenant, token } = await rememberedMember("revoked");
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    const response = await post(token.token, save("Written after revocation?"));
    expect(response.status).toBe(401);
    expect(await profileRows(tenant)).toBe(1);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("member removed: the next save is refused 401 and writes nothing", async () => {
    const { tenant, token } = await rememberedMember("removed");
    const audited = await auditRows(tenant);
    await removeMember(db.owner.db, tenant);
    const response = await post(token.token, save("Written after removal?"));
    expect(response.status).toBe(401);
    expect(await profileRows(tenant)).toBe(1);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("expired: the next save after the expiry is refused 401 and writes nothing", async () => {
    const expiresAt = new Date(Date.now() + 1_500);
    const { tenant, token } = await rememberedMember("expired", { expiresAt });
    const audited = await auditRows(tenant);
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 200));
    const response = await post(token.token, save("Written after expiry?"));
    expect(response.status).toBe(401);
    expect(await profileRows(tenant)).toBe(1);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("revoked: every other kind of request is refused 401 too, none answered from memory", async () => {
    const attempts: [string, unknown][] = [
      ["tools/list", request("tools/list")],
      ["prompts/list", request("prompts/list")],
      [
        "initialize",
        request("initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "attacker", version: "1" },
        }),
      ],
      ["invalid arguments", callTool("north__working_profile_answer", { question: 5 })],
      ["unknown tool", callTool("north__nothing", {})],
      ["a tool outside the token's scopes", callTool("north__memory_forget", { memory_id: "x" })],
      ["a batch", [save("In a batch?"), request("tools/list")]],
      ["a notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
      ["a body that does not parse", "{ not json"],
    ];
    // A fresh remembered token for each attempt: a 401 forgets the token, so after the first
    // refusal the rest would be looked up, not answered from memory, whatever the route did.
    for (const [label, body] of attempts) {
      const { tenant, token } = await rememberedMember("everything");
      const audited = await auditRows(tenant);
      await revokeApiToken(db.owner.db, { id: token.id });
      const response = await post(token.token, body);
      expect(response.status, label).toBe(401);
      expect(await profileRows(tenant), label).toBe(1);
      expect(await auditRows(tenant), label).toBe(audited);
    }
  });

  it("revoked while the limiter refuses: 401, and no rate_limited row is audited", async () => {
    const { tenant, token } = await rememberedMember("limited");
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    // Spend this member's whole write budget, so the next save is a refusal that is audited.
    const principal = {
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      role: "member" as const,
      scopes: PROFILE,
      tokenId: token.id,
    };
    while ((await limiter.consume(principal, "write")).allowed) {}
    const response = await post(token.token, save("Refused and revoked?"));
    expect(response.status).toBe(401);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("revoked while its protocol budget is spent: 401, and no mcp_protocol row is audited", async () => {
    const { tenant, token } = await rememberedMember("metered");
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    const principal = {
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      role: "member" as const,
      scopes: PROFILE,
      tokenId: token.id,
    };
    while ((await limiter.consume(principal, "protocol")).allowed) {}
    const response = await post(token.token, save("Metered and revoked?"));
    expect(response.status).toBe(401);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("demoted: the call runs as the member the token names now, never as the remembered manager", async () => {
    const manager = await addMember(db.owner.db, {
      organizationId: ws.organizationId,
      email: `demoted-${++ids}@example.test`,
      role: "manager",
    });
    const tenant = { organizationId: manager.organizationId, userId: manager.userId };
    // Without admin: demotion leaves this token alive, so only its role changes.
    const token = await tokenFor(tenant);
    expect((await post(token.token, save("Asked as a manager?"))).status).toBe(200);
    await setMemberRole(db.owner.db, { ...tenant, role: "member" });
    const before = logs.length;
    const response = await post(token.token, save("Asked as a member?"));
    expect(response.status).toBe(200);
    expect(await profileRows(tenant)).toBe(2);
    const [row] = await db.owner.client<{ role: string }[]>`
      select role from members where user_id = ${tenant.userId}`;
    expect(row?.role).toBe("member");
    // The remembered manager was refused by the database and the call served again as the member.
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
  });

  it("scopes narrowed under the same token: a save and a forget are the scope gate's 403", async () => {
    const { tenant, token } = await rememberedMember("narrowed");
    // No North path narrows a token's scopes in place (a new token is minted), so an operator's
    // edit stands in for one: hash, token id, member, role and organisation stay as remembered.
    await db.owner.client`update api_tokens set scopes = ${["memory:read"]} where id = ${token.id}`;
    const audited = await auditRows(tenant);
    const before = logs.length;
    const saved = await post(token.token, save("Asked past the narrowed scopes?"));
    expect(saved.status).toBe(403);
    expect(saved.headers.get("www-authenticate")).toContain('scope="profile:write"');
    const forget = callTool("north__memory_forget", { subject_type: "client", subject_id: "Acme" });
    const forgot = await post(token.token, forget);
    expect(forgot.status).toBe(403);
    expect(forgot.headers.get("www-authenticate")).toContain('scope="memory:write"');
    expect(await profileRows(tenant)).toBe(1);
    expect(await auditRows(tenant)).toBe(audited);
    // The database refused the remembered scopes: the tool call's own proof met the change.
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
  });

  it("scopes narrowed to a list with repeats: a call with invalid arguments is the scope gate's 403", async () => {
    const { tenant, token } = await rememberedMember("repeated");
    // As many scopes as North remembers, fewer of them: only a comparison of sets tells.
    const narrowed = ["memory:read", "memory:read", "memory:read"];
    await db.owner.client`update api_tokens set scopes = ${narrowed} where id = ${token.id}`;
    const audited = await auditRows(tenant);
    const invalid = callTool("north__working_profile_answer", { question: 5 });
    const response = await post(token.token, invalid);
    // What a token looked up with these scopes gets, not the tool's "invalid arguments".
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:write"');
    expect(await auditRows(tenant)).toBe(audited);
  });
});
