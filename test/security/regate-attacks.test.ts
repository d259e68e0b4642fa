import { addMember, createApiToken, removeMember, setMemberRole, type Tenant } from "@north/db";
import { buildMcpApp, createAuthResolver, createRateLimiter, type Scope } from "@north/mcp-server";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import {
  toolCall as callTool,
  envelopedRequest as enveloped,
  LEGACY_HEADERS,
  modernHeaders,
  postMcp,
  replyOf,
  jsonRpcRequest as request,
  profileSave as save,
} from "../support/mcp-requests.ts";
import { auditRowsOf, consentIdOf, profileRowsOf } from "../support/rows.ts";
import {
  connectWithToken,
  loopbackRedirectUri,
  TestOAuthClient,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * A helper's attacks, with no context, on the re-gate of remembered credentials (decisions 036
 * and 041, after two fixes: the API token proof compares the set of scopes; a principal step-up
 * looked up meets the scope gate). The suite found one more hole, fixed since: a token narrowed
 * to a list with repeats passed `samePrincipal`'s length check (the duplicates describes). Each test passes while North holds: a remembered credential gets
 * exactly what a freshly looked-up one would (status, challenge, rows, audit rows, budgets,
 * embeddings, logs), whatever changed under it. Each attack is paired, where it helps, with a
 * control: the same request with a token North never remembered (looked up at once).
 */

const PROFILE: Scope[] = ["profile:write", "memory:read", "memory:write"];
const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];

const { db, server, newPage } = useSignInSuite();

type App = ReturnType<typeof buildMcpApp>;
let api: App;
let oauthApp: App;
let logs: string[];
const embedded: string[] = [];

const recordingEmbedder = {
  async embed(texts: readonly string[]) {
    embedded.push(...texts);
    return texts.map(() => Array.from({ length: 256 }, (_, i) => (i === 0 ? 1 : 0)));
  },
};

function limiter(options: { writes?: number; reads?: number; protocol?: number } = {}) {
  return createRateLimiter({
    writesPerMinute: options.writes ?? 10_000,
    readsPerMinute: options.reads ?? 10_000,
    protocolRequestsPerMinute: options.protocol ?? 10_000,
  });
}

function apiApp(options: { writes?: number; reads?: number; protocol?: number } = {}) {
  return buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db),
    limiter: limiter(options),
    logger: capturingLogger().logger,
    auditKey: TEST_AUDIT_KEY,
    embedder: recordingEmbedder,
  });
}

beforeAll(() => {
  const captured = capturingLogger("debug");
  logs = captured.logs;
  api = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db),
    limiter: limiter(),
    logger: captured.logger,
    auditKey: TEST_AUDIT_KEY,
    embedder: recordingEmbedder,
  });
  oauthApp = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db, server.signIn.oauth),
    oauth: server.signIn.oauth,
    limiter: limiter(),
    logger: captured.logger,
    auditKey: TEST_AUDIT_KEY,
    embedder: recordingEmbedder,
  });
});

let ids = 0;
const post = (on: App, token: string, body: unknown, headers = LEGACY_HEADERS) =>
  postMcp(on, token, body, headers);
const profileRows = (tenant: Tenant) => profileRowsOf(db.owner.client, tenant);
const auditRows = (tenant: Tenant) => auditRowsOf(db.owner.client, tenant);
async function memoryRows(organizationId: string): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from memories where organization_id = ${organizationId}`;
  return row?.n ?? 0;
}

/** A comparable picture of an answer: status, challenge, and the JSON-RPC error or result kind. */
async function shape(response: Response) {
  const message = await replyOf(response);
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    error: message?.error?.code,
    isError: message?.result?.isError ?? false,
    outcome: message?.result?.structuredContent?.outcome,
    code: message?.result?.structuredContent?.code,
  };
}

// ---------------------------------------------------------------------------------------------
// API tokens
// ---------------------------------------------------------------------------------------------

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace(db.owner.db, "Regate");
});

async function newMember(label: string, role: "member" | "manager" = "member") {
  const member = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: `${label}-${++ids}@example.test`,
    role,
  });
  return { organizationId: member.organizationId, userId: member.userId };
}

/** A member's API token, used once through `on` (so North remembers it). */
async function rememberedToken(
  label: string,
  options: { on?: App; role?: "member" | "manager"; scopes?: Scope[]; first?: unknown } = {},
) {
  const on = options.on ?? api;
  const tenant = await newMember(label, options.role);
  const token = await createApiToken(db.owner.db, {
    ...tenant,
    scopes: options.scopes ?? PROFILE,
    expiresAt: null,
  });
  const first = await post(on, token.token, options.first ?? request("tools/list"));
  expect(first.status).toBe(200);
  // tools/list is looked up (never remembered-only): a tool call is what North remembers from.
  const seed = await post(on, token.token, callTool("north__memory_held", {}));
  expect(seed.status).toBe(200);
  return { tenant, token };
}

/** The same token's scopes, edited in place (no North path does: an operator's edit). */
const setScopes = (tokenId: string, scopes: string[]) =>
  db.owner.client`update api_tokens set scopes = ${scopes} where id = ${tokenId}`;

/** A fresh token with exactly these scopes, never seen by North: the looked-up control. */
async function lookedUpToken(scopes: string[], role: "member" | "manager" = "member") {
  const tenant = await newMember("control", role);
  const token = await createApiToken(db.owner.db, {
    ...tenant,
    scopes: scopes as Scope[],
    expiresAt: null,
  });
  return { tenant, token };
}

describe("API token scopes with duplicates (regression: samePrincipal compares sets)", () => {
  const invalidSave = () => callTool("north__working_profile_answer", { question: 5 });

  it("narrowed to [memory:read x3]: an invalid save is the scope gate's 403, as for a looked-up token", async () => {
    const { tenant, token } = await rememberedToken("dup-invalid");
    await setScopes(token.id, ["memory:read", "memory:read", "memory:read"]);
    const audited = await auditRows(tenant);
    const remembered = await shape(await post(api, token.token, invalidSave()));
    const control = await lookedUpToken(["memory:read", "memory:read", "memory:read"]);
    const looked = await shape(await post(api, control.token.token, invalidSave()));
    expect(looked.status).toBe(403);
    expect(remembered).toEqual(looked);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("narrowed to [profile:write, memory:read, memory:read]: an invalid remember is the 403 naming memory:write", async () => {
    const { token } = await rememberedToken("dup-remember");
    await setScopes(token.id, ["profile:write", "memory:read", "memory:read"]);
    const body = () => callTool("north__memory_remember", { kind: "nonsense", body: 7 });
    const remembered = await shape(await post(api, token.token, body()));
    expect(remembered.status).toBe(403);
    expect(remembered.challenge).toContain('scope="memory:write"');
  });

  it("narrowed to duplicates: an invalid enveloped 2026-07-28 save is the 403 too", async () => {
    const { token } = await rememberedToken("dup-modern");
    await setScopes(token.id, ["memory:read", "memory:write", "memory:write"]);
    const response = await post(
      api,
      token.token,
      enveloped("tools/call", {
        name: "north__working_profile_answer",
        arguments: { question: 5 },
      }),
      modernHeaders("tools/call", "north__working_profile_answer"),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:write"');
  });

  it("narrowed to duplicates: a valid save is refused by the database and gets the 403, nothing written", async () => {
    const { tenant, token } = await rememberedToken("dup-valid");
    await setScopes(token.id, ["memory:read", "memory:read", "memory:read"]);
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    const response = await post(api, token.token, save("Past duplicate scopes?"));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:write"');
    expect(await profileRows(tenant)).toBe(rows);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("same set with a duplicate added: the save is served once, one row and one audit row", async () => {
    const { tenant, token } = await rememberedToken("dup-same-set");
    await setScopes(token.id, [...PROFILE, "memory:write"]);
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    const response = await post(api, token.token, save("Same set, a duplicate?"));
    expect(response.status).toBe(200);
    expect(await profileRows(tenant)).toBe(rows + 1);
    expect(await auditRows(tenant)).toBe(audited + 1);
  });

  it("reordered scopes: served (the proof compares sets), one row", async () => {
    const { tenant, token } = await rememberedToken("reordered");
    await setScopes(token.id, [...PROFILE].reverse());
    const rows = await profileRows(tenant);
    const response = await post(api, token.token, save("Reordered?"));
    expect(response.status).toBe(200);
    expect(await profileRows(tenant)).toBe(rows + 1);
  });
});

describe("API token scopes widened, emptied, narrowed (regressions)", () => {
  it("widened from memory:read to every member scope: a save is served as the widened token", async () => {
    const { tenant, token } = await rememberedToken("widened", { scopes: ["memory:read"] });
    await setScopes(token.id, PROFILE);
    const rows = await profileRows(tenant);
    const response = await post(api, token.token, save("After widening?"));
    expect(response.status).toBe(200);
    expect(await profileRows(tenant)).toBe(rows + 1);
  });

  it("widened from none: an invalid call gets the tool's own answer, not the 403", async () => {
    const tenant = await newMember("empty");
    const token = await createApiToken(db.owner.db, { ...tenant, scopes: [], expiresAt: null });
    // Looked up (and remembered) with no scopes: a tool call's 403 still remembers the lookup.
    expect((await post(api, token.token, callTool("north__memory_held", {}))).status).toBe(403);
    await setScopes(token.id, PROFILE);
    const remembered = await shape(
      await post(api, token.token, callTool("north__working_profile_answer", { question: 5 })),
    );
    const control = await lookedUpToken(PROFILE);
    const looked = await shape(
      await post(
        api,
        control.token.token,
        callTool("north__working_profile_answer", { question: 5 }),
      ),
    );
    expect(remembered).toEqual(looked);
  });

  it("emptied: a save, a read and tools/list get what a looked-up empty token gets", async () => {
    const { tenant, token } = await rememberedToken("emptied");
    await setScopes(token.id, []);
    const control = await lookedUpToken([]);
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    for (const body of [
      () => save("Emptied?"),
      () => callTool("north__memory_held", {}),
      () => request("tools/list"),
    ]) {
      const remembered = await shape(await post(api, token.token, body()));
      const looked = await shape(await post(api, control.token.token, body()));
      expect(remembered).toEqual(looked);
    }
    expect(await profileRows(tenant)).toBe(rows);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("narrowed: a batch mixing an allowed read and a save is the 403 of a looked-up token, nothing written", async () => {
    const { tenant, token } = await rememberedToken("batch");
    await setScopes(token.id, ["memory:read"]);
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    const batch = () => [callTool("north__memory_held", {}), save("In a narrowed batch?")];
    const remembered = await shape(await post(api, token.token, batch()));
    const control = await lookedUpToken(["memory:read"]);
    const looked = await shape(await post(api, control.token.token, batch()));
    expect(remembered).toEqual(looked);
    expect(remembered.status).toBe(403);
    expect(await profileRows(tenant)).toBe(rows);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("narrowed: prompts/get of the onboarding prompt is the 403 naming profile:write", async () => {
    const { token } = await rememberedToken("prompt");
    await setScopes(token.id, ["memory:read", "memory:write"]);
    const response = await post(api, token.token, request("prompts/get", { name: "onboard" }));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="profile:write"');
  });

  it("narrowed past memory:write: a remember sends nothing to the embeddings provider and gets the 403", async () => {
    const { tenant, token } = await rememberedToken("narrow-embed");
    await setScopes(token.id, ["memory:read", "profile:write"]);
    const secret = `narrowed secret ${++ids}`;
    const memories = await memoryRows(ws.organizationId);
    const response = await post(
      api,
      token.token,
      callTool("north__memory_remember", { kind: "fact", origin: "stated", body: secret }),
    );
    expect(response.status).toBe(403);
    expect(embedded).not.toContain(secret);
    expect(await memoryRows(ws.organizationId)).toBe(memories);
    expect(await auditRows(tenant)).toBeGreaterThanOrEqual(0);
  });

  it("narrowed past memory:write: a forget by id is the 403 naming memory:write, nothing audited", async () => {
    const { tenant, token } = await rememberedToken("forget-id");
    await setScopes(token.id, ["memory:read", "profile:write"]);
    const audited = await auditRows(tenant);
    const response = await post(
      api,
      token.token,
      callTool("north__memory_forget", { memory_id: crypto.randomUUID() }),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="memory:write"');
    expect(await auditRows(tenant)).toBe(audited);
  });
});

describe("budgets after a re-gate's 403 (API token)", () => {
  it("the refused save's write point goes back: the member's own token still saves", async () => {
    const tight = apiApp({ writes: 2 });
    const { tenant, token } = await rememberedToken("budget-regate", {
      on: tight,
      first: save("Write 1 of 2?"),
    });
    await setScopes(token.id, ["memory:read"]);
    const response = await post(tight, token.token, save("Past the narrowed scopes?"));
    expect(response.status).toBe(403);
    const own = await createApiToken(db.owner.db, { ...tenant, scopes: PROFILE, expiresAt: null });
    const served = await shape(await post(tight, own.token, save("Write 2 of 2?")));
    expect(served.code).toBeUndefined();
    expect(served.outcome).toBe("created");
  });

  it("a demoted manager's save spends one write point, not two", async () => {
    const tight = apiApp({ writes: 3 });
    const { tenant, token } = await rememberedToken("budget-demoted", {
      on: tight,
      role: "manager",
      first: save("Write 1 of 3?"),
    });
    await setMemberRole(db.owner.db, { ...tenant, role: "member" });
    // Refused by the database (role), served again as the member: write 2 of 3.
    expect((await shape(await post(tight, token.token, save("Write 2 of 3?")))).outcome).toBe(
      "created",
    );
    expect((await shape(await post(tight, token.token, save("Write 3 of 3?")))).outcome).toBe(
      "created",
    );
  });
});

describe("a scope change racing calls in flight (API token)", () => {
  it("every save answered 200 wrote one row and one audit row; every 403 wrote nothing", async () => {
    const { tenant, token } = await rememberedToken("race-narrow");
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    const calls = Array.from({ length: 30 }, (_, i) =>
      new Promise((resolve) => setTimeout(resolve, i * 3)).then(() =>
        post(api, token.token, save(`Racing a narrowing ${i}?`)),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    await setScopes(token.id, ["memory:read"]);
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 403)).toBe(true);
    expect(statuses.at(-1)).toBe(403);
    expect(await profileRows(tenant)).toBe(rows + served);
    expect(await auditRows(tenant)).toBe(audited + served);
  });
});

describe("roles of an API token with admin (regressions)", () => {
  it("promoted member holding admin: a forget by subject erases colleagues' memories only as a fresh lookup would", async () => {
    const subject = { subject_type: "client", subject_id: `Promoted Co ${++ids}` };
    const colleague = await lookedUpToken(PROFILE);
    const remember = callTool("north__memory_remember", {
      kind: "observation",
      origin: "stated",
      body: "Colleague's note.",
      ...subject,
    });
    expect((await post(api, colleague.token.token, remember)).status).toBe(200);
    const { tenant, token } = await rememberedToken("promoted-admin", {
      scopes: [...PROFILE, "admin"],
    });
    await setMemberRole(db.owner.db, { ...tenant, role: "manager" });
    const reply = await shape(
      await post(api, token.token, callTool("north__memory_forget", subject)),
    );
    expect(reply.status).toBe(200);
    expect(reply.outcome).toBe("forgotten");
  });
});

describe("logs and audit rows carry no question, answer or memory text", () => {
  it("after every attack above, no secret text appears in the captured logs", async () => {
    const secret = `Question text that must not be logged ${++ids}`;
    const { token } = await rememberedToken("log-check");
    await setScopes(token.id, ["memory:read", "memory:read", "memory:read"]);
    await post(api, token.token, save(secret));
    await setScopes(token.id, PROFILE);
    await post(api, token.token, save(secret));
    // The refused and re-gated paths ran (and logged), so their lines are what is searched.
    expect(logs.join("\n")).toContain("credential_refused");
    expect(logs.join("\n")).not.toContain(secret);
    expect(logs.join("\n")).not.toContain("Remembered answer.");
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from audit_events where row_to_json(audit_events)::text like ${`%${secret}%`}`;
    expect(row?.n).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// North access tokens (OAuth)
// ---------------------------------------------------------------------------------------------

/** A host connected with `scopes` requested, its access token used once (remembered). */
async function rememberedGrant(tenant: Tenant, tokenScopes: string[], requested?: string[]) {
  const apiToken = await createApiToken(db.owner.db, {
    ...tenant,
    scopes: tokenScopes as Scope[],
    expiresAt: null,
  });
  const client = new TestOAuthClient(await loopbackRedirectUri());
  if (requested) client.scope = requested.join(" ");
  const outcome = await connectWithToken(server.base, await newPage(), apiToken.token, { client });
  expect(outcome.result).toBe("AUTHORIZED");
  const accessToken = outcome.tokens?.access_token ?? "";
  const first = await post(oauthApp, accessToken, callTool("north__memory_held", {}));
  expect(first.status).toBe(200);
  return { apiToken, accessToken };
}

const setCap = (userId: string, cap: string[]) =>
  db.owner.client`update north_auth.oauth_grant set scope_cap = ${cap} where user_id = ${userId}`;

/** A colleague's memory of a fresh subject: what makes a manager's forget ask for admin. */
async function colleagueWroteAbout(firm: Workspace) {
  const subject = { subject_type: "client", subject_id: `Acme ${++ids}` };
  const colleague = await createApiToken(db.owner.db, {
    ...firm.member,
    scopes: PROFILE,
    expiresAt: null,
  });
  const written = await post(
    api,
    colleague.token,
    callTool("north__memory_remember", {
      kind: "observation",
      origin: "stated",
      body: "The client prefers short memos.",
      ...subject,
    }),
  );
  expect(written.status).toBe(200);
  return subject;
}

describe("step-up of a remembered grant (decision 041)", () => {
  it("manager whose cap lost admin: a forget by subject is served (no unreachable step-up), as looked up", async () => {
    const firm = await createWorkspace(db.owner.db, "Cap admin");
    const subject = await colleagueWroteAbout(firm);
    const { accessToken } = await rememberedGrant(firm.manager, [...MEMBER_SCOPES, "admin"]);
    // Before: the step-up's 403 (admin reachable under the cap).
    expect(
      (await post(oauthApp, accessToken, callTool("north__memory_forget", subject))).status,
    ).toBe(403);
    await setCap(firm.manager.userId, MEMBER_SCOPES);
    const reply = await shape(
      await post(oauthApp, accessToken, callTool("north__memory_forget", subject)),
    );
    expect(reply.status).toBe(200);
    expect(reply.challenge).toBeNull();
  });

  it("manager whose cap gained admin: a forget by subject is the step-up's 403, as looked up", async () => {
    const firm = await createWorkspace(db.owner.db, "Cap gained");
    const subject = await colleagueWroteAbout(firm);
    const { accessToken } = await rememberedGrant(firm.manager, MEMBER_SCOPES);
    // Before: admin is not reachable under the cap, so the forget runs (erasing nothing of theirs).
    const before = await post(
      oauthApp,
      accessToken,
      callTool("north__memory_forget", { subject_type: "client", subject_id: `None ${++ids}` }),
    );
    expect(before.status).toBe(200);
    await setCap(firm.manager.userId, [...MEMBER_SCOPES, "admin"]);
    const memories = await memoryRows(firm.organizationId);
    const response = await post(oauthApp, accessToken, callTool("north__memory_forget", subject));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain("admin");
    expect(await memoryRows(firm.organizationId)).toBe(memories);
  });

  it("promoted member whose cap holds admin: a forget by memory id asks the step-up, as looked up", async () => {
    const firm = await createWorkspace(db.owner.db, "Promoted");
    const subject = await colleagueWroteAbout(firm);
    const [memory] = await db.owner.client<{ id: string }[]>`
      select id from memories where organization_id = ${firm.organizationId} limit 1`;
    const other = await addMember(db.owner.db, {
      organizationId: firm.organizationId,
      email: `promoted-${++ids}@example.test`,
    });
    const tenant = { organizationId: other.organizationId, userId: other.userId };
    const { accessToken } = await rememberedGrant(tenant, [...MEMBER_SCOPES, "admin"]);
    await setMemberRole(db.owner.db, { ...tenant, role: "manager" });
    const response = await post(
      oauthApp,
      accessToken,
      callTool("north__memory_forget", { memory_id: memory?.id }),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain("admin");
    void subject;
  });

  it("manager holding admin, removed: a forget by memory id is 401, never served or stepped up", async () => {
    const firm = await createWorkspace(db.owner.db, "Admin removed");
    await colleagueWroteAbout(firm);
    const [memory] = await db.owner.client<{ id: string }[]>`
      select id from memories where organization_id = ${firm.organizationId} limit 1`;
    const everything = [...MEMBER_SCOPES, "admin"];
    const { accessToken } = await rememberedGrant(firm.manager, everything, everything);
    const memories = await memoryRows(firm.organizationId);
    const audited = await auditRows(firm.manager);
    await removeMember(db.owner.db, firm.manager);
    const response = await post(
      oauthApp,
      accessToken,
      callTool("north__memory_forget", { memory_id: memory?.id }),
    );
    expect(response.status).toBe(401);
    expect(await memoryRows(firm.organizationId)).toBe(memories);
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories
      where organization_id = ${firm.organizationId} and body is null`;
    expect(row?.n).toBe(0);
    expect(await auditRows(firm.manager)).toBe(audited);
  });

  it("manager holding admin, cap narrowed to drop admin: the forget erases only their own, as looked up", async () => {
    const firm = await createWorkspace(db.owner.db, "Admin narrowed");
    const subject = await colleagueWroteAbout(firm);
    const everything = [...MEMBER_SCOPES, "admin"];
    const { accessToken } = await rememberedGrant(firm.manager, everything, everything);
    await setCap(firm.manager.userId, MEMBER_SCOPES);
    const reply = await shape(
      await post(oauthApp, accessToken, callTool("north__memory_forget", subject)),
    );
    expect(reply.status).toBe(200);
    // The colleague's memory must still have its body: no admin now.
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories
      where organization_id = ${firm.organizationId} and body is not null`;
    expect(row?.n).toBe(1);
  });

  it("manager holding admin, demoted: the forget runs as a member and erases no colleague's memory", async () => {
    const firm = await createWorkspace(db.owner.db, "Admin demoted");
    const subject = await colleagueWroteAbout(firm);
    const everything = [...MEMBER_SCOPES, "admin"];
    const { accessToken } = await rememberedGrant(firm.manager, everything, everything);
    await setMemberRole(db.owner.db, { ...firm.manager, role: "member" });
    // The control: an app that never saw the token looks it up at once.
    const fresh = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: createAuthResolver(db.app.db, server.signIn.oauth),
      oauth: server.signIn.oauth,
      limiter: limiter(),
      logger: capturingLogger().logger,
      auditKey: TEST_AUDIT_KEY,
    });
    const looked = await shape(await post(fresh, accessToken, callTool("north__memory_held", {})));
    const reply = await shape(
      await post(oauthApp, accessToken, callTool("north__memory_forget", subject)),
    );
    expect(reply.status).toBe(looked.status);
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories
      where organization_id = ${firm.organizationId} and body is not null`;
    expect(row?.n).toBe(1);
  });
});

describe("caps of a remembered grant (decision 041)", () => {
  it("cap reordered (same set): served, the proof refuses and the lookup serves once", async () => {
    const firm = await createWorkspace(db.owner.db, "Reordered cap");
    const { accessToken } = await rememberedGrant(firm.member, MEMBER_SCOPES);
    await setCap(firm.member.userId, [...MEMBER_SCOPES].reverse());
    const rows = await profileRows(firm.member);
    const response = await post(oauthApp, accessToken, save("Reordered cap?"));
    expect(response.status).toBe(200);
    expect(await profileRows(firm.member)).toBe(rows + 1);
  });

  it("cap emptied: a save, a read and prompts/get are the 403s a looked-up grant gets", async () => {
    const firm = await createWorkspace(db.owner.db, "Empty cap");
    const { accessToken } = await rememberedGrant(firm.member, MEMBER_SCOPES);
    await setCap(firm.member.userId, []);
    const audited = await auditRows(firm.member);
    for (const body of [
      save("Empty cap?"),
      callTool("north__memory_held", {}),
      request("prompts/get", { name: "onboard" }),
    ]) {
      const response = await post(oauthApp, accessToken, body);
      expect(response.status).toBe(403);
    }
    expect(await auditRows(firm.member)).toBe(audited);
  });

  it("cap with duplicates narrowing it: a save is the 403 naming profile:write", async () => {
    const firm = await createWorkspace(db.owner.db, "Dup cap");
    const { accessToken } = await rememberedGrant(firm.member, MEMBER_SCOPES);
    await setCap(firm.member.userId, ["memory:read", "memory:read", "memory:read"]);
    const invalid = await post(
      oauthApp,
      accessToken,
      callTool("north__working_profile_answer", { question: 5 }),
    );
    expect(invalid.status).toBe(403);
    expect(invalid.headers.get("www-authenticate")).toContain('scope="profile:write"');
  });

  it("consent revoked: a forget by memory id of a remembered manager is 401", async () => {
    const firm = await createWorkspace(db.owner.db, "Revoked forget");
    await colleagueWroteAbout(firm);
    const { accessToken } = await rememberedGrant(firm.manager, [...MEMBER_SCOPES, "admin"]);
    await db.owner
      .client`delete from north_auth.oauth_consent where id = ${await consentIdOf(db.owner.client, firm.manager.userId)}`;
    const response = await post(
      oauthApp,
      accessToken,
      callTool("north__memory_forget", { memory_id: crypto.randomUUID() }),
    );
    expect(response.status).toBe(401);
  });

  it("cap narrowed past memory:write: an enveloped 2026-07-28 forget by subject is the scope gate's 403", async () => {
    const firm = await createWorkspace(db.owner.db, "Modern forget");
    const subject = await colleagueWroteAbout(firm);
    const { accessToken } = await rememberedGrant(firm.manager, [...MEMBER_SCOPES, "admin"]);
    await setCap(firm.manager.userId, ["profile:write", "memory:read"]);
    const response = await post(
      oauthApp,
      accessToken,
      enveloped("tools/call", { name: "north__memory_forget", arguments: subject }),
      modernHeaders("tools/call", "north__memory_forget"),
    );
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('scope="memory:write"');
  });
});

describe("limiter refusals of a narrowed remembered token (API token)", () => {
  it("over its write budget and narrowed: the 403 a looked-up token gets, not the 429", async () => {
    const tight = apiApp({ writes: 1 });
    const { token } = await rememberedToken("tool-429", {
      on: tight,
      first: save("Write 1 of 1?"),
    });
    await setScopes(token.id, ["memory:read"]);
    const remembered = await shape(await post(tight, token.token, save("Over and narrowed?")));
    expect(remembered.status).toBe(403);
    expect(remembered.challenge).toContain('scope="profile:write"');
  });

  it("over its protocol budget and narrowed: the 429 a looked-up token gets, audited once", async () => {
    const tight = apiApp({ protocol: 3 });
    // Points 1 (tools/list) and 2 (memory_held) of 3.
    const { tenant, token } = await rememberedToken("protocol-429", { on: tight });
    await setScopes(token.id, ["memory:read"]);
    expect((await post(tight, token.token, save("Point 3?"))).status).toBe(403);
    const audited = await auditRows(tenant);
    const response = await post(tight, token.token, save("Point 4?"));
    expect(response.status).toBe(429);
    expect(await auditRows(tenant)).toBe(audited + 1);
  });
});

describe("duplicates racing calls in flight (API token)", () => {
  it("a narrowing to duplicates during a burst of invalid saves: every answer after it is the 403", async () => {
    const { token } = await rememberedToken("dup-race");
    await setScopes(token.id, ["memory:read", "memory:read", "memory:read"]);
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(api, token.token, callTool("north__working_profile_answer", { question: 5 })).then(
          (r) => r.status,
        ),
      ),
    );
    expect(statuses).toEqual(statuses.map(() => 403));
  });
});

describe("duplicates: what the database proof still catches (API token)", () => {
  it("narrowed to [profile:write, memory:read, memory:read]: a valid remember sends nothing out and is the 403", async () => {
    const { tenant, token } = await rememberedToken("dup-embed");
    await setScopes(token.id, ["profile:write", "memory:read", "memory:read"]);
    const secret = `duplicate-scoped secret ${++ids}`;
    const memories = await memoryRows(ws.organizationId);
    const audited = await auditRows(tenant);
    const response = await post(
      api,
      token.token,
      callTool("north__memory_remember", { kind: "fact", origin: "stated", body: secret }),
    );
    expect(response.status).toBe(403);
    expect(embedded).not.toContain(secret);
    expect(await memoryRows(ws.organizationId)).toBe(memories);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("after the first invalid call a lookup refreshed what North remembers: the next one is the 403", async () => {
    const { token } = await rememberedToken("dup-window");
    await setScopes(token.id, ["memory:read", "memory:read", "memory:read"]);
    const invalid = () => callTool("north__working_profile_answer", { question: 5 });
    const first = await post(api, token.token, invalid());
    const second = await post(api, token.token, invalid());
    // The first answer is the remembered principal's re-gate, the second a refreshed one's.
    expect({ first: first.status, second: second.status }).toEqual({ first: 403, second: 403 });
  });
});
