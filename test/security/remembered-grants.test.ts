import {
  createApiToken,
  removeMember,
  revokeApiToken,
  revokeGrant,
  setMemberRole,
  setSsoConnection,
  type Tenant,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createRateLimiter,
  createSecretBox,
} from "@north/mcp-server";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import {
  toolCall as callTool,
  postMcp,
  jsonRpcRequest as request,
  profileSave as save,
} from "../support/mcp-requests.ts";
import { auditRowsOf, consentIdOf, profileRowsOf } from "../support/rows.ts";
import {
  connectWithToken,
  TEST_SECRET_KEY,
  TestOAuthClient,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * Decision 041: North remembers the principal of a North access token it looked up, and a tool
 * call then proves the grant inside its own transaction (`enter_as_oauth_grant`) instead of
 * looking it up first. These are the attacks on that: a grant revoked, past its lifetime, whose
 * member was removed or demoted, whose opening API token was revoked, or whose organisation got
 * an IdP after North remembered it must get exactly what it would get had North looked it up —
 * 401, nothing written, nothing audited — and a step-up is never answered to one. Real access
 * tokens from North's authorization server (the browser flow), the real resolver on the app
 * login role, the real app.
 */

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];

const { db, server, newPage } = useSignInSuite();

let app: ReturnType<typeof buildMcpApp>;
let logs: string[];
/** Every text the embeddings provider (a recording stand-in) was asked to embed. */
const embedded: string[] = [];
let resolve: ReturnType<typeof createAuthResolver>;

beforeAll(() => {
  const captured = capturingLogger("debug");
  logs = captured.logs;
  resolve = createAuthResolver(db.app.db, server.signIn.oauth);
  app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db, server.signIn.oauth),
    oauth: server.signIn.oauth,
    limiter: createRateLimiter({
      writesPerMinute: 10_000,
      readsPerMinute: 10_000,
      protocolRequestsPerMinute: 10_000,
    }),
    logger: captured.logger,
    auditKey: TEST_AUDIT_KEY,
    embedder: {
      async embed(texts) {
        embedded.push(...texts);
        return texts.map(() => Array.from({ length: 256 }, (_, i) => (i === 0 ? 1 : 0)));
      },
    },
  });
});

let ids = 0;
const post = (accessToken: string, body: unknown) => postMcp(app, accessToken, body);

const profileRows = (tenant: Tenant) => profileRowsOf(db.owner.client, tenant);
const auditRows = (tenant: Tenant) => auditRowsOf(db.owner.client, tenant);

/**
 * `who` connected as a host connects (API token pasted on the sign-in page, consent approved),
 * with one save made through the app, so North has looked the access token up and remembers it.
 */
async function rememberedGrant(
  ws: Workspace,
  who: "member" | "manager" = "member",
  scopes = MEMBER_SCOPES,
) {
  const person = ws[who];
  const tenant = { organizationId: person.organizationId, userId: person.userId };
  const apiToken = await createApiToken(db.owner.db, { ...tenant, scopes, expiresAt: null });
  const outcome = await connectWithToken(server.base, await newPage(), apiToken.token);
  expect(outcome.result).toBe("AUTHORIZED");
  const accessToken = outcome.tokens?.access_token ?? "";
  const first = await post(accessToken, save(`First question of ${who} ${++ids}?`));
  expect(first.status).toBe(200);
  expect(await profileRows(tenant)).toBe(1);
  return { tenant, apiToken, accessToken, client: outcome.client };
}

/**
 * A save after the grant stopped holding: 401, no row, no audit row, and the log says the
 * database refused the remembered grant (so the remembered path, not a lookup, met it first).
 */
async function expectRefusedAfter(
  remembered: Awaited<ReturnType<typeof rememberedGrant>>,
  label: string,
) {
  const audited = await auditRows(remembered.tenant);
  const before = logs.length;
  const response = await post(remembered.accessToken, save(`Written after ${label}?`));
  expect(response.status).toBe(401);
  expect(await profileRows(remembered.tenant)).toBe(1);
  expect(await auditRows(remembered.tenant)).toBe(audited);
  expect(logs.slice(before).join("\n")).toContain("credential_refused");
}

describe("a remembered North access token whose grant ended (decision 041)", () => {
  it("remembers: a tool call's second request comes back unproven, naming its grant", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { accessToken } = await rememberedGrant(ws);
    const asked = new Request("http://localhost/mcp", {
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    const first = await resolve(asked, { mayRemember: true });
    expect(first?.unproven).toBeUndefined();
    const second = await resolve(asked, { mayRemember: true });
    expect(second?.unproven).toEqual({
      grant: { clientId: expect.any(String), grantId: expect.any(String), scopeCap: MEMBER_SCOPES },
    });
    expect(second?.userId).toBe(ws.member.userId);
    // Only where the caller proves it: every other route looks the token up.
    expect((await resolve(asked))?.unproven).toBeUndefined();
  });

  it("consent revoked: the next save is refused 401 and writes nothing", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await revokeGrant(db.owner.db, await consentIdOf(db.owner.client, ws.member.userId));
    await expectRefusedAfter(remembered, "revocation");
  });

  it("member removed: the next save is refused 401 and writes nothing", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await removeMember(db.owner.db, remembered.tenant);
    await expectRefusedAfter(remembered, "removal");
  });

  it("the API token that opened the grant revoked: the next save is refused 401", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await revokeApiToken(db.owner.db, { id: remembered.apiToken.id });
    await expectRefusedAfter(remembered, "the opening token's revocation");
  });

  it("the grant past its lifetime: the next save is refused 401", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await db.owner.client`
      update north_auth.oauth_grant set granted_at = now() - interval '31 days',
        expires_at = now() - interval '1 day' where user_id = ${ws.member.userId}`;
    await expectRefusedAfter(remembered, "the grant's lifetime");
  });

  it("the organisation given an IdP: a grant a pasted token opened is refused 401", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await setSsoConnection(db.owner.db, {
      organizationId: ws.organizationId,
      issuer: `https://idp-${++ids}.remembered.example`,
      clientId: "north",
      clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt("secret"),
      domains: [`remembered-${ids}.example`],
    });
    await expectRefusedAfter(remembered, "the IdP");
  });

  it("demoted: the call runs as the member the grant names now, never as the remembered manager", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws, "manager");
    await setMemberRole(db.owner.db, { ...remembered.tenant, role: "member" });
    const before = logs.length;
    const response = await post(remembered.accessToken, save("Asked as a member?"));
    expect(response.status).toBe(200);
    expect(await profileRows(remembered.tenant)).toBe(2);
    // The remembered manager was refused by the database and the call served again as the member.
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
  });

  it("cap narrowed under the same grant: the call the cap no longer covers is the scope gate's 403", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    // No North path narrows a cap in place (a new consent is a new grant), so an operator's edit
    // stands in for one: the grant id, member, role and organisation stay what North remembers.
    await db.owner.client`
      update north_auth.oauth_grant set scope_cap = ${["memory:read"]}
        where user_id = ${ws.member.userId}`;
    const audited = await auditRows(remembered.tenant);
    const before = logs.length;
    const response = await post(remembered.accessToken, save("Asked past the narrowed cap?"));
    // Exactly what a looked-up principal gets: the 403 naming the scope, not an unknown tool.
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:write"');
    expect(await profileRows(remembered.tenant)).toBe(1);
    expect(await auditRows(remembered.tenant)).toBe(audited);
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
  });

  it("cap narrowed past memory:write: a forget by subject is the scope gate's 403, not an unknown tool", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    // A forget by subject may ask for a step-up, so step-up looks the grant up first: the
    // member it finds now must still meet the scope gate before the call is served.
    await db.owner.client`
      update north_auth.oauth_grant set scope_cap = ${["profile:write", "memory:read"]}
        where user_id = ${ws.member.userId}`;
    const audited = await auditRows(remembered.tenant);
    const response = await post(
      remembered.accessToken,
      callTool("north__memory_forget", { subject_type: "client", subject_id: `Acme ${++ids}` }),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="memory:write"');
    expect(await auditRows(remembered.tenant)).toBe(audited);
  });

  it("removed: a forget that would ask a manager to step up is 401, never the step-up's 403", async () => {
    const ws = await createWorkspace(db.owner.db);
    const subject = { subject_type: "client", subject_id: `Acme ${++ids}` };
    // A colleague's memory of the subject: a manager's forget of it asks for admin (decision 030).
    const colleague = await createApiToken(db.owner.db, {
      ...ws.member,
      scopes: MEMBER_SCOPES,
      expiresAt: null,
    });
    const remember = callTool("north__memory_remember", {
      kind: "observation",
      origin: "stated",
      body: "The client prefers short memos.",
      ...subject,
    });
    const written = await post(colleague.token, remember);
    expect(written.status).toBe(200);
    // Its token carries admin, so the grant may step up to it; the host asked for member scopes.
    const remembered = await rememberedGrant(ws, "manager", [...MEMBER_SCOPES, "admin"]);
    // Before removal the same forget is the step-up's 403: the attack below would be told so.
    const stepUp = await post(remembered.accessToken, callTool("north__memory_forget", subject));
    expect(stepUp.status).toBe(403);
    await removeMember(db.owner.db, remembered.tenant);
    const response = await post(remembered.accessToken, callTool("north__memory_forget", subject));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).not.toContain("insufficient_scope");
  });
});

describe("more ways a remembered grant ends or changes (decision 041, a helper's cases)", () => {
  it("re-consent for the same client: the old grant's token is refused 401, the new one serves", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    // The same host (same registered client, no tokens kept) connects again, signed in with a
    // newer API token: North asks for consent, and the new grant ends the remembered one. The
    // library keeps token times to the second (decision 029): a person takes longer than that.
    const newer = await createApiToken(db.owner.db, {
      ...remembered.tenant,
      scopes: MEMBER_SCOPES,
      expiresAt: null,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const client = new TestOAuthClient(remembered.client.redirectUri);
    client.saveClientInformation(remembered.client.clientInformation() as never);
    const again = await connectWithToken(server.base, await newPage(), newer.token, { client });
    expect(again.result).toBe("AUTHORIZED");
    await expectRefusedAfter(remembered, "re-consent");
    const fresh = await post(again.tokens?.access_token ?? "", save("Asked on the new grant?"));
    expect(fresh.status).toBe(200);
    expect(await profileRows(remembered.tenant)).toBe(2);
  });

  it("the API token that opened the grant expired: the next save is refused 401", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await db.owner.client`
      update api_tokens set expires_at = now() - interval '1 second'
        where id = ${remembered.apiToken.id}`;
    await expectRefusedAfter(remembered, "the opening token's expiry");
  });

  it("promoted: the call is refused by the database and served as the manager the member is now", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await setMemberRole(db.owner.db, { ...remembered.tenant, role: "manager" });
    const before = logs.length;
    const response = await post(remembered.accessToken, save("Asked as a manager?"));
    expect(response.status).toBe(200);
    expect(await profileRows(remembered.tenant)).toBe(2);
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
  });

  it("consent revoked: a memory_remember sends nothing to the embeddings provider", async () => {
    const ws = await createWorkspace(db.owner.db);
    const remembered = await rememberedGrant(ws);
    await revokeGrant(db.owner.db, await consentIdOf(db.owner.client, ws.member.userId));
    const secret = `sent by a revoked grant ${++ids}`;
    const response = await post(
      remembered.accessToken,
      callTool("north__memory_remember", { kind: "fact", origin: "stated", body: secret }),
    );
    expect(response.status).toBe(401);
    // A looked-up grant is refused before any handler runs: the provider never sees the text.
    expect(embedded).not.toContain(secret);
  });

  it("consent revoked: every other kind of request is refused 401 too, none answered from memory", async () => {
    const attempts: [string, unknown][] = [
      ["tools/list", request("tools/list")],
      ["prompts/list", request("prompts/list")],
      ["invalid arguments", callTool("north__working_profile_answer", { question: 5 })],
      ["unknown tool", callTool("north__nothing", {})],
      ["a batch", [save("In a batch?"), request("tools/list")]],
      ["a notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
    ];
    // One workspace and a fresh remembered grant per attempt: a 401 forgets the token, so
    // after the first refusal the rest would be looked up whatever the route did.
    for (const [label, body] of attempts) {
      const ws = await createWorkspace(db.owner.db);
      const remembered = await rememberedGrant(ws);
      const audited = await auditRows(remembered.tenant);
      await revokeGrant(db.owner.db, await consentIdOf(db.owner.client, ws.member.userId));
      const response = await post(remembered.accessToken, body);
      expect(response.status, label).toBe(401);
      expect(await profileRows(remembered.tenant), label).toBe(1);
      expect(await auditRows(remembered.tenant), label).toBe(audited);
    }
  });
});

describe("enter_as_oauth_grant (decision 041)", () => {
  it("sets the tenant only for the exact member, client, grant, organisation, role and cap", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { tenant } = await rememberedGrant(ws);
    const [grant] = await db.owner.client<{ id: string; client_id: string; scope_cap: string[] }[]>`
      select id, client_id, scope_cap from north_auth.oauth_grant where user_id = ${tenant.userId}`;
    if (!grant) throw new Error("no grant");
    const other = await createWorkspace(db.owner.db);
    // A colleague's live grant in the same firm: a real grant, client and member to mix in.
    const colleague = await rememberedGrant(ws, "manager");
    const [theirs] = await db.owner.client<{ id: string; client_id: string }[]>`
      select id, client_id from north_auth.oauth_grant where user_id = ${colleague.tenant.userId}`;
    if (!theirs) throw new Error("no colleague grant");
    const exact = {
      user: tenant.userId,
      client: grant.client_id,
      grant: grant.id,
      organization: tenant.organizationId,
      role: "member",
      cap: grant.scope_cap.join(" ") as string | null,
    };
    /** What the app role's transaction gets: the tenant it set, or the SQLSTATE refusing it. */
    const enter = async (p: typeof exact) => {
      try {
        return await db.app.client.begin(async (tx) => {
          await tx`select public.enter_as_oauth_grant(${p.user}, ${p.client}, ${p.grant}, ${p.organization}, ${p.role}, ${p.cap})`;
          const [row] = await tx<{ org: string | null }[]>`
            select current_setting('north.organization_id', true) as org`;
          return row?.org ?? null;
        });
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(await enter(exact)).toBe(tenant.organizationId);
    for (const wrong of [
      { ...exact, organization: other.organizationId },
      { ...exact, user: other.member.userId },
      { ...exact, client: "another-client" },
      { ...exact, grant: crypto.randomUUID() },
      { ...exact, role: "manager" },
      { ...exact, cap: [...MEMBER_SCOPES, "admin"].join(" ") },
      { ...exact, cap: "memory:read" },
      { ...exact, cap: null },
      { ...exact, grant: null as unknown as string },
      { ...exact, grant: theirs.id },
      { ...exact, client: theirs.client_id, grant: theirs.id },
      { ...exact, user: colleague.tenant.userId },
      { ...exact, user: colleague.tenant.userId, client: theirs.client_id },
    ]) {
      expect(await enter(wrong), JSON.stringify(wrong)).toBe("NA401");
    }
  });
});
