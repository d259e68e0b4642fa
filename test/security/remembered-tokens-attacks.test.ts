import {
  addMember,
  connectDatabase,
  createApiToken,
  hasSqlState,
  removeMember,
  revokeApiToken,
  setMemberRole,
  type Tenant,
} from "@north/db";
import {
  buildMcpApp,
  createAuthResolver,
  createRateLimiter,
  type Embedder,
  type RateLimiter,
  type Scope,
  type ToolContext,
} from "@north/mcp-server";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { auditStatement } from "../../packages/db/src/audit.ts";
import type { Tx } from "../../packages/db/src/client.ts";
import { connectionOf, finishWith } from "../../packages/db/src/pipelined-transaction.ts";
import { prepareStatement, runStatement } from "../../packages/db/src/prepared.ts";
import { withTenant } from "../../packages/db/src/tenant.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { capturingLogger } from "../support/logs.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import {
  toolCall as callTool,
  MODERN_ENVELOPE as ENVELOPE,
  envelopedRequest as enveloped,
  LEGACY_HEADERS,
  modernHeaders,
  postMcp,
  replyOf,
  jsonRpcRequest as request,
  profileSave as save,
} from "../support/mcp-requests.ts";
import { auditRowsOf, profileRowsOf } from "../support/rows.ts";

/**
 * Attacks on decision 036 (remembered API tokens, proven by the tool call's own transaction) and
 * on the "last statement" mechanism (`finishWith`). Each test passes while North holds and fails
 * when the attack works. The real resolver, the real app, the app login role.
 *
 * The claim under attack: a remembered token whose grant ended gets exactly what a freshly
 * looked-up one would (401, nothing written, nothing audited, no tenant set), on every kind of
 * request; and a read's last statement goes out with its audit row and COMMIT, nothing after it.
 *
 * What broke when a helper with no context first ran these (each is fixed, decision 036):
 * - A revoked remembered token still ran what a tool call does before its first statement's
 *   answer: the protocol meter and the read/write limiter charged the member's budgets (now given
 *   back when the database refuses the credential: `RateLimiter.refund`), and the handler called
 *   the embeddings provider with the attacker's text while holding its firm's tenant slot and a
 *   pooled connection (a tool that calls out is now proven first: `ToolDefinition.callsOut`).
 * - finishWith ran a lazy Drizzle query it refused; a connection proxy that guarded only
 *   `unsafe` let a tagged template run after COMMIT, or, kept past its transaction, inside the
 *   next tenant's (every way of sending is now refused once the transaction ended or is over).
 *   A work that fails after its last statement stays committed by design: only a read may end
 *   early (the runner refuses it to any other tool), and finishWith is refused in a savepoint.
 */

let db: TestDatabase;
let ws: Workspace;
let limiter: RateLimiter;
let app: ReturnType<typeof buildMcpApp>;
let logs: string[];
/** Every text the embeddings provider was asked to embed, in order. */
const embedded: string[] = [];

/** A stand-in for the external embeddings provider that records what North sends it. */
function recordingEmbedder(delayMs = 0): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    texts,
    async embed(input: readonly string[]) {
      texts.push(...input);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return input.map(() => {
        const v = new Array<number>(256).fill(0);
        v[0] = 1;
        return v;
      });
    },
  };
}

const PROFILE: Scope[] = ["profile:write", "memory:read", "memory:write"];

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
  const embedder = recordingEmbedder();
  app = buildMcpApp({
    db: db.app.db,
    resolvePrincipal: createAuthResolver(db.app.db),
    limiter,
    logger: captured.logger,
    auditKey: TEST_AUDIT_KEY,
    embedder: {
      async embed(texts) {
        embedded.push(...texts);
        return embedder.embed(texts);
      },
    },
  });
});
afterAll(async () => {
  await db?.drop();
});

type App = ReturnType<typeof buildMcpApp>;

async function tokenFor(tenant: Tenant, options: { expiresAt?: Date; scopes?: Scope[] } = {}) {
  return createApiToken(db.owner.db, {
    organizationId: tenant.organizationId,
    userId: tenant.userId,
    scopes: options.scopes ?? PROFILE,
    expiresAt: options.expiresAt ?? null,
  });
}

let ids = 0;
const post = (token: string, body: unknown, headers = LEGACY_HEADERS, on = app) =>
  postMcp(on, token, body, headers);
const rememberMemory = (body: string) =>
  callTool("north__memory_remember", { kind: "fact", origin: "stated", body });

const profileRows = (tenant: Tenant) => profileRowsOf(db.owner.client, tenant);
const auditRows = (tenant: Tenant) => auditRowsOf(db.owner.client, tenant);
async function memoryRows(organizationId: string): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from memories where organization_id = ${organizationId}`;
  return row?.n ?? 0;
}

/** A fresh member of `ws` with a token North has just looked up (and so remembers). */
async function rememberedMember(
  label: string,
  options: { on?: App; role?: "member" | "manager"; scopes?: Scope[] } = {},
) {
  const member = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: `${label}-${++ids}@example.test`,
    role: options.role,
  });
  const tenant = { organizationId: member.organizationId, userId: member.userId };
  const token = await tokenFor(tenant, { scopes: options.scopes });
  const first = await post(
    token.token,
    save(`First question of ${label}?`),
    LEGACY_HEADERS,
    options.on,
  );
  expect(first.status).toBe(200);
  return { tenant, token };
}

// ---------------------------------------------------------------------------------------------
// 1. Work a handler does before its first statement runs for a credential that no longer holds.
// ---------------------------------------------------------------------------------------------

describe("work done before the proof comes back (decision 036)", () => {
  it("revoked: a remembered token's memory_remember sends nothing to the embeddings provider", async () => {
    const { tenant, token } = await rememberedMember("embed-remember");
    const memories = await memoryRows(ws.organizationId);
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    const secret = `exfiltrated by a revoked token ${++ids}`;
    const response = await post(token.token, rememberMemory(secret));
    expect(response.status).toBe(401);
    expect(await memoryRows(ws.organizationId)).toBe(memories);
    expect(await auditRows(tenant)).toBe(audited);
    // A looked-up token would have been refused before any handler ran: the provider (a third
    // party, billed per call) must not have seen the revoked holder's text.
    expect(embedded).not.toContain(secret);
  });

  it("revoked: a remembered token's memory_recall sends nothing to the embeddings provider", async () => {
    const { token } = await rememberedMember("embed-recall");
    await revokeApiToken(db.owner.db, { id: token.id });
    const query = `recall query of a revoked token ${++ids}`;
    const response = await post(token.token, callTool("north__memory_recall", { query }));
    expect(response.status).toBe(401);
    expect(embedded).not.toContain(query);
  });

  it("revoked: a remembered token holds neither its firm's tenant slot nor a connection while the provider answers", async () => {
    // One slot per firm and a short wait, so a slot held by the revoked call is visible as a
    // refusal of a colleague's call; the provider takes a second, as a slow one does.
    const slow = recordingEmbedder(1_000);
    const gated = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: createAuthResolver(db.app.db),
      limiter: createRateLimiter({
        writesPerMinute: 10_000,
        readsPerMinute: 10_000,
        protocolRequestsPerMinute: 10_000,
      }),
      logger: capturingLogger().logger,
      auditKey: TEST_AUDIT_KEY,
      embedder: slow,
      tenantConcurrency: { perOrganization: 1, maxWaitMs: 300 },
    });
    const { token } = await rememberedMember("gate-holder", { on: gated });
    const colleague = await rememberedMember("gate-colleague", { on: gated });
    await revokeApiToken(db.owner.db, { id: token.id });
    const revokedCall = post(token.token, rememberMemory("slow body"), LEGACY_HEADERS, gated);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const response = await post(
      colleague.token.token,
      save("Asked while a revoked token waits on the provider?"),
      LEGACY_HEADERS,
      gated,
    );
    const reply = await replyOf(response);
    expect((await revokedCall).status).toBe(401);
    // With a lookup the revoked call would have been a 401 before the gate: the colleague's save
    // must be served, not refused as over the firm's share.
    expect(reply?.result?.structuredContent?.code).toBeUndefined();
    expect(reply?.result?.isError ?? false).toBe(false);
    // A reply that could not be read at all passes the two above: the save's receipt is required.
    expect(reply?.result?.structuredContent?.outcome).toBe("created");
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Budgets charged for a credential that no longer holds.
// ---------------------------------------------------------------------------------------------

describe("budgets a revoked remembered token can still spend (decision 036)", () => {
  it("revoked: a remembered token's save does not spend its member's write budget", async () => {
    const tight = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: createAuthResolver(db.app.db),
      limiter: createRateLimiter({
        writesPerMinute: 2,
        readsPerMinute: 10_000,
        protocolRequestsPerMinute: 10_000,
      }),
      logger: capturingLogger().logger,
      auditKey: TEST_AUDIT_KEY,
    });
    // Write 1 of 2: the leaked token, used once by its holder (and so remembered).
    const { tenant, token: leaked } = await rememberedMember("budget-write", { on: tight });
    const own = await tokenFor(tenant);
    await revokeApiToken(db.owner.db, { id: leaked.id });
    // The attacker tries once with the revoked token: 401, as expected.
    expect((await post(leaked.token, save("Attacker's save?"), LEGACY_HEADERS, tight)).status).toBe(
      401,
    );
    // The member's own, valid token: write 2 of 2 had a lookup refused the attacker first.
    const reply = await replyOf(
      await post(own.token, save("The member's own save?"), LEGACY_HEADERS, tight),
    );
    expect(reply?.result?.structuredContent?.code).toBeUndefined();
    expect(reply?.result?.structuredContent?.outcome).toBe("created");
  });

  it("revoked: a burst with a remembered token costs its holder at most one protocol point", async () => {
    const tight = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: createAuthResolver(db.app.db),
      limiter: createRateLimiter({
        writesPerMinute: 10_000,
        readsPerMinute: 10_000,
        protocolRequestsPerMinute: 6,
      }),
      logger: capturingLogger().logger,
      auditKey: TEST_AUDIT_KEY,
    });
    // Point 1 of 6.
    const { tenant, token: leaked } = await rememberedMember("budget-burst", { on: tight });
    const own = await tokenFor(tenant);
    await revokeApiToken(db.owner.db, { id: leaked.id });
    // Decision 036: "What an attacker holding a revoked token can still do is cost its holder
    // one protocol point". Twenty at once, every one answered 401.
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(leaked.token, save(`Burst ${i}?`), LEGACY_HEADERS, tight),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(burst.map(() => 401));
    // Points 2 (the attacker's one) and 3: the member's own token is still served.
    const response = await post(own.token, request("tools/list"), LEGACY_HEADERS, tight);
    expect(response.status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Every way in, after revocation: none answered from memory (regressions, expected to hold).
// ---------------------------------------------------------------------------------------------

describe("every kind of request after revocation (decision 036, regressions)", () => {
  it("a 2026-07-28 enveloped request of any kind is 401 once the remembered token is revoked", async () => {
    const { tenant, token } = await rememberedMember("modern");
    // The envelope works while the token holds.
    const ok = await post(
      token.token,
      enveloped("tools/call", {
        name: "north__working_profile_answer",
        arguments: { question: "Enveloped?", answer: "Yes." },
      }),
      modernHeaders("tools/call", "north__working_profile_answer"),
    );
    expect(ok.status).toBe(200);
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    const attempts: [string, unknown, Record<string, string>][] = [
      [
        "tools/call",
        enveloped("tools/call", {
          name: "north__working_profile_answer",
          arguments: { question: "Enveloped after revocation?", answer: "No." },
        }),
        modernHeaders("tools/call", "north__working_profile_answer"),
      ],
      [
        "tools/call with a header that disagrees with the body",
        enveloped("tools/call", {
          name: "north__working_profile_answer",
          arguments: { question: "Mismatched?", answer: "No." },
        }),
        modernHeaders("tools/call", "north__working_profile"),
      ],
      [
        "tools/call of an unknown tool",
        enveloped("tools/call", { name: "north__nothing", arguments: {} }),
        modernHeaders("tools/call", "north__nothing"),
      ],
      [
        "tools/call with a wrong revision in the envelope",
        {
          ...request("tools/call", {
            name: "north__working_profile",
            arguments: {},
            _meta: { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
          }),
        },
        modernHeaders("tools/call", "north__working_profile"),
      ],
      ["server/discover", enveloped("server/discover"), modernHeaders("server/discover")],
      ["tools/list", enveloped("tools/list"), modernHeaders("tools/list")],
      [
        "prompts/get",
        enveloped("prompts/get", { name: "onboard" }),
        modernHeaders("prompts/get", "onboard"),
      ],
    ];
    for (const [label, body, headers] of attempts) {
      const response = await post(token.token, body, headers);
      expect(response.status, label).toBe(401);
    }
    expect(await profileRows(tenant)).toBe(rows);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("odd tools/calls (id null, no id, extra members, a read, a task) are 401 once revoked", async () => {
    const { tenant, token } = await rememberedMember("odd");
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    await revokeApiToken(db.owner.db, { id: token.id });
    const call = {
      name: "north__working_profile_answer",
      arguments: { question: "Odd?", answer: "No." },
    };
    const attempts: [string, unknown][] = [
      ["id null", { jsonrpc: "2.0", id: null, method: "tools/call", params: call }],
      ["a notification", { jsonrpc: "2.0", method: "tools/call", params: call }],
      ["a result member", { ...request("tools/call", call), result: {} }],
      ["a task", request("tools/call", { ...call, task: { ttl: 1000 } })],
      ["a read (last statement)", callTool("north__working_profile", { view: "all" })],
      ["a recall", callTool("north__memory_recall", { query: "anything" })],
      ["a held", callTool("north__memory_held", {})],
      ["jsonrpc 1.0", { ...request("tools/call", call), jsonrpc: "1.0" }],
      ["a one-element batch", [request("tools/call", call)]],
    ];
    for (const [label, body] of attempts) {
      const response = await post(token.token, body);
      expect(response.status, label).toBe(401);
    }
    expect(await profileRows(tenant)).toBe(rows);
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("GET /manifest, GET /mcp and DELETE /mcp never answer from memory", async () => {
    const { token } = await rememberedMember("routes");
    await revokeApiToken(db.owner.db, { id: token.id });
    for (const [method, path] of [
      ["GET", "/manifest"],
      ["GET", "/mcp"],
      ["DELETE", "/mcp"],
    ] as const) {
      const response = await app.request(`http://localhost${path}`, {
        method,
        headers: { Authorization: `Bearer ${token.token}`, Accept: "application/json" },
      });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });

  it("nothing in the logs after revocation names the remembered member", async () => {
    const { tenant, token } = await rememberedMember("logs");
    await revokeApiToken(db.owner.db, { id: token.id });
    const before = logs.length;
    const bodies: unknown[] = [
      save("Logged?"),
      rememberMemory("logged body"),
      callTool("north__working_profile", { view: "all" }),
      callTool("north__working_profile_answer", { question: 5 }),
      callTool("north__nothing", {}),
      [save("In a batch?"), request("tools/list")],
      "{ not json",
    ];
    for (const body of bodies) expect((await post(token.token, body)).status).toBe(401);
    const after = logs.slice(before).join("\n");
    expect(after).not.toContain(tenant.userId);
  });
});

// ---------------------------------------------------------------------------------------------
// 4. Roles and memberships that changed, both directions (regressions).
// ---------------------------------------------------------------------------------------------

describe("a member whose role or membership changed (decision 036, regressions)", () => {
  it("promoted member → manager: the call is refused by the database and served as the manager", async () => {
    const { tenant, token } = await rememberedMember("promoted");
    await setMemberRole(db.owner.db, { ...tenant, role: "manager" });
    const before = logs.length;
    const response = await post(token.token, save("Asked after promotion?"));
    expect(response.status).toBe(200);
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
    const again = await post(token.token, save("Asked again after promotion?"));
    expect(again.status).toBe(200);
  });

  it("removed and reinstated in the same firm: the remembered token stays dead", async () => {
    const { tenant, token } = await rememberedMember("reinstated");
    const rows = await profileRows(tenant);
    const [row] = await db.owner.client<{ email: string }[]>`
      select email from members where user_id = ${tenant.userId}`;
    await removeMember(db.owner.db, tenant);
    await addMember(db.owner.db, {
      organizationId: tenant.organizationId,
      email: String(row?.email),
    });
    const response = await post(token.token, save("Asked after reinstatement?"));
    expect(response.status).toBe(401);
    expect(await profileRows(tenant)).toBe(rows);
  });

  it("demoted with an admin token: the remembered admin token is 401 on a save and a read", async () => {
    const { tenant, token } = await rememberedMember("admin-demoted", {
      role: "manager",
      scopes: [...PROFILE, "admin"],
    });
    const audited = await auditRows(tenant);
    await setMemberRole(db.owner.db, { ...tenant, role: "member" });
    for (const body of [save("Asked after demotion?"), callTool("north__memory_held", {})]) {
      const response = await post(token.token, body);
      expect(response.status).toBe(401);
    }
    expect(await auditRows(tenant)).toBe(audited);
  });

  it("a 2026-07-28 enveloped save is served again as whoever the token names now: narrowed 403, demoted 200", async () => {
    const enveloping = (question: string) =>
      [
        enveloped("tools/call", {
          name: "north__working_profile_answer",
          arguments: { question, answer: "Enveloped." },
        }),
        modernHeaders("tools/call", "north__working_profile_answer"),
      ] as const;
    const narrowed = await rememberedMember("modern-narrowed");
    await db.owner.client`
      update api_tokens set scopes = ${["memory:read"]} where id = ${narrowed.token.id}`;
    const refused = await post(narrowed.token.token, ...enveloping("Past the narrowed scopes?"));
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('scope="profile:write"');
    const demoted = await rememberedMember("modern-demoted", { role: "manager" });
    await setMemberRole(db.owner.db, { ...demoted.tenant, role: "member" });
    const before = logs.length;
    const served = await post(demoted.token.token, ...enveloping("Asked as a member?"));
    expect(served.status).toBe(200);
    expect(logs.slice(before).join("\n")).toContain("credential_refused");
    expect(await profileRows(narrowed.tenant)).toBe(1);
    expect(await profileRows(demoted.tenant)).toBe(2);
  });

  it("a token of another firm is never proven as this one: two remembered members, two firms", async () => {
    const other = await createWorkspace(db.owner.db, "Other");
    const a = await tokenFor(ws.member);
    const b = await tokenFor(other.member);
    for (const t of [a, b]) expect((await post(t.token, save(`Seed ${++ids}?`))).status).toBe(200);
    const rowsA = await profileRows(ws.member);
    const rowsB = await profileRows(other.member);
    await revokeApiToken(db.owner.db, { id: a.id });
    expect((await post(a.token, save("A after revocation?"))).status).toBe(401);
    expect((await post(b.token, save("B after A's revocation?"))).status).toBe(200);
    expect(await profileRows(ws.member)).toBe(rowsA);
    expect(await profileRows(other.member)).toBe(rowsB + 1);
  });
});

// ---------------------------------------------------------------------------------------------
// 4b. enter_as_api_token itself, as the app login role (regression).
// ---------------------------------------------------------------------------------------------

describe("enter_as_api_token with a valid token hash and another principal (regression)", () => {
  it("refuses another firm, user, token id, role or set of scopes, and sets no tenant", async () => {
    const other = await createWorkspace(db.owner.db, "Enter");
    const minted = await tokenFor(ws.member);
    const { hashToken } = await import("@north/db");
    const hash = hashToken(minted.token);
    const scopes = minted.scopes.join(" ");
    const good = [hash, minted.id, ws.organizationId, ws.member.userId, "member", scopes] as const;
    const as = (change: Partial<Record<"org" | "user" | "token" | "role" | "scopes", string>>) => [
      hash,
      change.token ?? minted.id,
      change.org ?? ws.organizationId,
      change.user ?? ws.member.userId,
      change.role ?? "member",
      change.scopes ?? scopes,
    ];
    const tries: [string, readonly string[]][] = [
      ["another firm", as({ org: other.organizationId })],
      ["another user", as({ user: ws.manager.userId })],
      ["another firm's member", as({ org: other.organizationId, user: other.member.userId })],
      ["another token id", as({ token: other.organizationId })],
      ["another role", as({ role: "manager" })],
      ["fewer scopes", as({ scopes: "memory:read" })],
      ["more scopes", as({ scopes: `${scopes} admin` })],
      ["no scopes", as({ scopes: "" })],
    ];
    const enter = (args: readonly string[]) =>
      db.app.client
        .begin(async (tx) => {
          await tx.unsafe("select public.enter_as_api_token($1, $2, $3, $4, $5, $6)", [...args]);
          const [row] = await tx.unsafe(
            "select current_setting('north.organization_id', true) as org, current_setting('north.user_id', true) as usr",
          );
          return `${row?.org}/${row?.usr}`;
        })
        .then(
          (tenant) => tenant,
          (error: unknown) => (hasSqlState(error, "NA401") ? "NA401" : String(error)),
        );
    expect(await enter(good)).toBe(`${ws.organizationId}/${ws.member.userId}`);
    for (const [label, args] of tries) expect(await enter(args), label).toBe("NA401");
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Revocation racing calls in flight (regression).
// ---------------------------------------------------------------------------------------------

describe("revocation racing calls in flight (decision 036, regression)", () => {
  it("every call answered 200 wrote its row and its audit row; every other wrote nothing", async () => {
    const { tenant, token } = await rememberedMember("race");
    const rows = await profileRows(tenant);
    const audited = await auditRows(tenant);
    const calls = Array.from({ length: 40 }, (_, i) =>
      new Promise((resolve) => setTimeout(resolve, i * 3)).then(() =>
        post(token.token, save(`Racing question ${i}?`)),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await revokeApiToken(db.owner.db, { id: token.id });
    const statuses = (await Promise.all(calls)).map((r) => r.status);
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(401);
    expect(await profileRows(tenant)).toBe(rows + served);
    expect(await auditRows(tenant)).toBe(audited + served);
  });
});

// ---------------------------------------------------------------------------------------------
// 6. The last statement (`finishWith`, decision 036), below the app.
// ---------------------------------------------------------------------------------------------

const SETTING = prepareStatement(
  [],
  () =>
    sql`select current_setting('north.organization_id', true) as value, pg_catalog.txid_current_if_assigned() as tx`,
  (row) => ({ value: String(row.value ?? ""), tx: row.tx }),
);
const audited = (tool: string) => [auditStatement({ tool, outcome: "read" })];
const insertAnswer = (tx: Tx, questionId: string) =>
  tx.execute(
    sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
        values (${ws.organizationId}, ${ws.member.userId}, ${questionId}, 'Q?', 'A.')`,
  );
async function answers(questionId: string): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from working_profile_answers where question_id = ${questionId}`;
  return row?.n ?? 0;
}
async function toolAudits(tool: string): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from audit_events where tool = ${tool}`;
  return row?.n ?? 0;
}

describe("the last statement (finishWith, decision 036)", () => {
  it("a last statement refused because it was not sent at once never runs", async () => {
    // Decision 036: "a statement not sent at once is refused before it runs". A Drizzle query is
    // sent only when awaited, so it is refused — and the handler, told so, carries on.
    const refused = await withTenant(db.app.db, ws.member, async (tx) => {
      const outcome = await Promise.resolve().then(() => {
        try {
          finishWith(tx, audited("atk_late"), () => insertAnswer(tx, "atk-late-1"));
          return "not refused";
        } catch (error) {
          return (error as Error).message;
        }
      });
      // Let whatever was set going reach the server before the transaction ends.
      await tx.execute(sql`select 1`);
      return outcome;
    });
    expect(refused).toBe("finishWith's statement was not sent before its first await");
    expect(await answers("atk-late-1")).toBe(0);
  });

  it("a tool that is not a read cannot end its transaction with its last statement", async () => {
    // finishWith commits with the last statement: a work that fails after it undoes nothing. So
    // the runner lets only a read end early; a write's ctx.last runs its statement as usual.
    const writer = {
      name: "north__test_late_failure",
      title: "Writes, ends early, then fails (test only)",
      description: "Inserts a row, sends its last statement with ctx.last, then throws.",
      kind: "write" as const,
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      async handler(_input: Record<string, never>, ctx: ToolContext) {
        await insertAnswer(ctx.tx, "atk-after-last-1");
        await ctx.last({ outcome: "created" }, () => runStatement(ctx.tx, SETTING, {}));
        throw new Error("fails after its last statement");
      },
    };
    const withWriter = buildMcpApp({
      db: db.app.db,
      resolvePrincipal: createAuthResolver(db.app.db),
      limiter,
      logger: capturingLogger("warn").logger,
      auditKey: TEST_AUDIT_KEY,
      capabilities: [{ id: "test-writer", scopes: [], tools: [writer], prompts: [], guidance: [] }],
    });
    const { token } = await tokenFor(ws.member);
    const response = await post(
      token,
      callTool("north__test_late_failure", {}),
      LEGACY_HEADERS,
      withWriter,
    );
    expect(await response.text()).toContain("Internal error");
    expect(await answers("atk-after-last-1")).toBe(0);
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from audit_events
      where tool = 'north__test_late_failure' and outcome = 'created'`;
    expect(row?.n).toBe(0);
  });

  it("a last statement sent inside a savepoint does not commit a work that then fails", async () => {
    const failed = await withTenant(db.app.db, ws.member, async (tx) => {
      await tx.transaction(async () => {
        await insertAnswer(tx, "atk-savepoint-1");
        await finishWith(tx, audited("atk_savepoint"), () => runStatement(tx, SETTING, {}));
      });
    }).then(
      () => "resolved",
      (error: unknown) => error,
    );
    expect(failed).not.toBe("resolved");
    expect(await answers("atk-savepoint-1")).toBe(0);
    expect(await toolAudits("atk_savepoint")).toBe(0);
  });

  it("no statement runs on the transaction's connection after COMMIT, whichever way it is sent", async () => {
    const after = await withTenant(db.app.db, ws.member, async (tx) => {
      await finishWith(tx, audited("atk_template"), () => runStatement(tx, SETTING, {}));
      const connection = connectionOf(tx);
      if (!connection) return "no connection adopted";
      // The adopted connection, called as postgres.js's tagged template rather than `unsafe`.
      return connection`select current_setting('north.organization_id', true) as value`.then(
        (rows) => `ran outside the transaction: ${JSON.stringify(rows[0])}`,
        (error: unknown) =>
          hasSqlState(error, "TRANSACTION_ENDED") ? "TRANSACTION_ENDED" : String(error),
      );
    });
    expect(after).toBe("TRANSACTION_ENDED");
  });

  it("a connection kept past its transaction never runs a statement inside the next tenant's transaction", async () => {
    // One connection, so the next transaction gets the same one.
    const small = connectDatabase(db.appUrl, {
      max: 1,
      transactionPooler: db.pooler === "transaction",
    });
    try {
      const other = await createWorkspace(db.owner.db, "Next");
      let leaked: ReturnType<typeof connectionOf>;
      await withTenant(small.db, ws.member, async (tx) => {
        leaked = connectionOf(tx);
        await tx.execute(sql`select 1`);
      });
      const seen = await withTenant(small.db, other.member, async (tx) => {
        await tx.execute(sql`select 1`);
        if (!leaked) return "no connection adopted";
        // `unsafe` is refused once the transaction ended; the tagged template is not.
        const viaUnsafe = await leaked
          .unsafe("select current_setting('north.organization_id', true) as value")
          .then(
            (rows) => String(rows[0]?.value),
            () => "refused",
          );
        const viaTemplate =
          await leaked`select current_setting('north.organization_id', true) as value`.then(
            (rows) => String(rows[0]?.value),
            () => "refused",
          );
        return { viaUnsafe, viaTemplate };
      });
      expect(seen).toEqual({ viaUnsafe: "refused", viaTemplate: "refused" });
    } finally {
      await small.close();
    }
  });

  it("a failing statement before the last one rolls everything back, audit row included", async () => {
    const failed = await withTenant(db.app.db, ws.member, async (tx) => {
      // Sent, not awaited: it fails on the server before the last statement runs.
      const first = runStatement(
        tx,
        prepareStatement(
          [],
          () => sql`select 1 / 0 as n`,
          (row) => row,
        ),
        {},
      ).catch(() => "failed");
      await insertAnswer(tx, "atk-earlier-1");
      const [row] = await finishWith(tx, audited("atk_earlier"), () =>
        runStatement(tx, SETTING, {}),
      );
      return { first: await first, row };
    }).then(
      (value) => value,
      (error: unknown) => ({ error: String(error) }),
    );
    expect("error" in failed).toBe(true);
    expect(await answers("atk-earlier-1")).toBe(0);
    expect(await toolAudits("atk_earlier")).toBe(0);
  });
});
