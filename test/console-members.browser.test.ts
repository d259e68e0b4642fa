import { randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { SAVE_TOOL } from "@north/agent-runtime";
import {
  addMember,
  authorizationServerTables as ast,
  createApiToken,
  createFingerprinter,
  ensureAuthorizationServerUser,
  listApiTokensForAdmin,
  readMemberOverview,
  revokeApiToken,
  revokeApiTokenForAdmin,
  saveAnswer,
  type Tenant,
  withTenant,
} from "@north/db";
import { sql } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  launchChromium,
  signedIn as signedInWith,
  startTestConsole,
  type TestConsole,
} from "./support/console.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { TEST_AUDIT_KEY } from "./support/mcp.ts";
import { connectClient } from "./support/mcp-client.ts";

/**
 * The console's Members section and the Working profiles page (SPEC §8, issue 12) in headless
 * Chromium against the real server: who has onboarded, their apps and tokens, revocation that
 * /mcp honours at once, the JSON download, and nothing of another organisation.
 */

const ANSWERS = [
  { question: "How formal should client letters be?", answer: `Formal ${randomUUID()}` },
  { question: "Which court do you plead before most?", answer: `Paris ${randomUUID()}` },
];
const MANAGER_ANSWER = { question: "Preferred memo length?", answer: "Two pages." };
const OTHER_ANSWER = `Elsewhere ${randomUUID()}`;

let db: TestDatabase;
let ws: Workspace;
let other: Workspace;
let quiet: Tenant;
let removed: Tenant;
let server: TestConsole;
let browser: Browser;
let base: string;
const tokens = { manager: "", revocable: "", kept: "", memberAdmin: "", other: "" };
const tokenIds = { revocable: "", kept: "", other: "" };
let grantClientName = "";

const mint = async (tenant: Tenant, scopes: string[]) =>
  createApiToken(db.owner.db, {
    organizationId: tenant.organizationId,
    userId: tenant.userId,
    scopes,
    expiresAt: null,
  });

/** An SDK client on /mcp with an API token, as Claude Code would connect. */
const connect = (token: string) => connectClient(`${base}/mcp`, token);

/** One JSON-RPC call on /mcp with a bearer token; its status is what a revocation changes. */
const listTools = (token: string) =>
  fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

/** A grant as the authorization server leaves it: user, client and consent. */
async function seedGrant(userId: string, clientName: string) {
  const clientId = `client-${randomBytes(6).toString("hex")}`;
  await ensureAuthorizationServerUser(db.owner.db, userId);
  await db.owner.db.insert(ast.oauthClient).values({
    id: randomUUID(),
    clientId,
    name: clientName,
    redirectUris: ["http://127.0.0.1:33418/callback"],
    createdAt: new Date(),
  });
  await db.owner.db.insert(ast.oauthConsent).values({
    id: randomUUID(),
    clientId,
    userId,
    scopes: ["profile:write", "memory:read"],
    createdAt: new Date(),
    updatedAt: new Date(),
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Members");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  const add = async (email: string) => ({
    organizationId: ws.organizationId,
    userId: (await addMember(db.owner.db, { organizationId: ws.organizationId, email })).userId,
  });
  quiet = await add(`quiet-${randomBytes(3).toString("hex")}@example.test`);
  removed = await add(`gone-${randomBytes(3).toString("hex")}@example.test`);

  tokens.manager = (await mint(ws.manager, ["admin"])).token;
  const revocable = await mint(ws.member, ["profile:write", "memory:read"]);
  const kept = await mint(ws.member, ["memory:read"]);
  tokens.memberAdmin = (await mint(ws.member, ["admin"])).token;
  const ended = await mint(ws.member, ["memory:read"]);
  await revokeApiToken(db.owner.db, { id: ended.id });
  const foreign = await mint(other.member, ["profile:write"]);
  Object.assign(tokens, { revocable: revocable.token, kept: kept.token, other: foreign.token });
  Object.assign(tokenIds, { revocable: revocable.id, kept: kept.id, other: foreign.id });

  server = await startTestConsole(db);
  base = server.base;

  // The member onboards through the real tool, over /mcp, with the token revoked later.
  const client = await connect(tokens.revocable);
  for (const a of ANSWERS) {
    const result = await client.callTool({ name: SAVE_TOOL, arguments: a });
    expect(result.isError).toBeFalsy();
  }
  await client.close();
  await withTenant(db.app.db, ws.manager, (tx) =>
    saveAnswer(tx, { owner: ws.manager, ...MANAGER_ANSWER }),
  );
  await withTenant(db.app.db, removed, (tx) =>
    saveAnswer(tx, { owner: removed, question: "Still here?", answer: "Left the firm." }),
  );
  await db.owner.client`update members set removed_at = now() where user_id = ${removed.userId}`;
  await withTenant(db.app.db, other.member, (tx) =>
    saveAnswer(tx, { owner: other.member, question: "Elsewhere?", answer: OTHER_ANSWER }),
  );
  grantClientName = `Claude ${randomBytes(2).toString("hex")}`;
  await seedGrant(ws.member.userId, grantClientName);

  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db.drop();
});

const signedIn = (token: string): Promise<Page> => signedInWith(browser, base, token);

/** The newest `updated_at` of a member's answers, as the page's `<time datetime>` carries it. */
async function lastUpdate(userId: string): Promise<string> {
  const [row] = await db.owner.client<{ last: Date }[]>`
    select max(updated_at) as last from working_profile_answers where owner_user_id = ${userId}`;
  return new Date(row?.last ?? 0).toISOString();
}

const memberRow = (page: Page, userId: string) => page.locator(`tr[data-member-id="${userId}"]`);

describe("the Members page", () => {
  it("lists every member with role, onboarding, connected apps and live tokens", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/members`);
    expect(await page.locator('header a[aria-current="page"]').textContent()).toBe("Members");
    expect(await page.locator("tbody tr").count()).toBe(4);

    const member = memberRow(page, ws.member.userId);
    expect(await member.locator('td[data-label="Role"]').textContent()).toBe("member");
    const onboarding = member.locator('td[data-label="Working profile"]');
    expect(await onboarding.textContent()).toContain("2 answers");
    expect(await onboarding.locator("time").getAttribute("datetime")).toBe(
      await lastUpdate(ws.member.userId),
    );
    expect(await onboarding.locator("time").textContent()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/,
    );
    expect(await member.locator('td[data-label="Connected apps"]').getAttribute("data-count")).toBe(
      "1",
    );
    const memberTokens = member.locator('td[data-label="API tokens"]');
    expect(await memberTokens.getAttribute("data-count")).toBe("3");
    expect(await memberTokens.textContent()).toContain("1 revoked or expired");

    const manager = memberRow(page, ws.manager.userId);
    expect(await manager.locator('td[data-label="Role"]').textContent()).toBe("manager");
    expect(await manager.locator('td[data-label="Working profile"]').textContent()).toContain(
      "1 answer",
    );
    expect(await manager.locator('td[data-label="API tokens"]').getAttribute("data-count")).toBe(
      "1",
    );

    const waiting = memberRow(page, quiet.userId);
    expect(await waiting.locator('td[data-label="Working profile"]').textContent()).toContain(
      "Not onboarded",
    );
    expect(await waiting.locator('td[data-label="Connected apps"]').textContent()).toBe("0");
    expect(await memberRow(page, removed.userId).textContent()).toContain("Removed");

    const text = (await page.textContent("main")) ?? "";
    expect(text).not.toContain("Elsewhere");
    expect(text).not.toContain(ANSWERS[0]?.answer);
    // Reflow on a phone: every table sits in a wrapper and every cell names its column.
    expect(await page.locator("table:not(.table-wrap > table)").count()).toBe(0);
    expect(await page.locator("tbody td:not([data-label])").count()).toBe(0);
    await page.screenshot({ path: "/tmp/north-admin-members.png", fullPage: true });
  });

  it("shows a member's answers, connected apps and tokens on their page", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/members`);
    await Promise.all([
      page.waitForURL(`${base}/admin/members/${ws.member.userId}`),
      memberRow(page, ws.member.userId).locator("a").first().click(),
    ]);
    const text = (await page.textContent("main")) ?? "";
    expect(text).toContain("transcription of what the lawyer said");
    for (const a of ANSWERS) {
      expect(text).toContain(a.question);
      expect(text).toContain(a.answer);
    }
    expect(text).not.toContain(MANAGER_ANSWER.answer);
    expect(await page.locator("tr[data-question-id]").count()).toBe(2);
    expect(await page.locator("tr[data-grant-id]").textContent()).toContain(grantClientName);
    expect(await page.locator("tr[data-token-id]").count()).toBe(4);
    expect(await page.locator('tr[data-token-id][data-state="live"]').count()).toBe(3);
    expect(await page.locator(`tr[data-token-id="${tokenIds.revocable}"]`).textContent()).toContain(
      "profile:write",
    );
    expect(await page.locator("tbody td:not([data-label])").count()).toBe(0);
    // Every visible form control has an accessible name.
    for (const button of await page.locator("main button").all()) {
      expect(await button.getAttribute("aria-label")).toMatch(/^Revoke /);
    }
    expect(page.url()).not.toContain("@");
    await page.screenshot({ path: "/tmp/north-admin-member.png", fullPage: true });

    const quietPage = await page.goto(`${base}/admin/members/${quiet.userId}`);
    expect(quietPage?.status()).toBe(200);
    expect(await page.textContent("main")).toContain("Not onboarded");
  });

  it("revokes a member's token: /mcp refuses it at once, and the ledger records it", async () => {
    expect((await listTools(tokens.revocable)).status).toBe(200);
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/members/${ws.member.userId}`);
    let question = "";
    page.once("dialog", (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await Promise.all([
      page.waitForURL(`${base}/admin/members/${ws.member.userId}?revoked=token`),
      page.click(`tr[data-token-id="${tokenIds.revocable}"] button`),
    ]);
    expect(question).toContain("Revoke this token");
    expect(await page.locator('p.notice[role="status"]').textContent()).toContain("revoked");
    expect(
      await page.locator(`tr[data-token-id="${tokenIds.revocable}"]`).getAttribute("data-state"),
    ).toBe("ended");
    expect(await page.locator(`tr[data-token-id="${tokenIds.revocable}"] button`).count()).toBe(0);

    expect((await listTools(tokens.revocable)).status).toBe(401);
    expect((await listTools(tokens.kept)).status).toBe(200);

    const audit = await db.owner.client`
      select actor_id, outcome, reason, target_fingerprint from audit_events
      where organization_id = ${ws.organizationId} and tool = 'token_revoke'`;
    expect(audit).toEqual([
      {
        actor_id: ws.manager.userId,
        outcome: "revoked",
        reason: "manager",
        target_fingerprint: createFingerprinter(TEST_AUDIT_KEY)(tokenIds.revocable).fingerprint,
      },
    ]);
    // A refresh re-GETs the page: nothing is posted twice.
    await page.reload();
    expect(
      (
        await db.owner
          .client`select count(*)::int as n from audit_events where tool = 'token_revoke'`
      )[0]?.n,
    ).toBe(1);
  });

  it("disconnects a member's app from their page and comes back to it", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/members/${ws.member.userId}`);
    let question = "";
    page.once("dialog", (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await Promise.all([
      page.waitForURL(`${base}/admin/members/${ws.member.userId}?revoked=app`),
      page.click("tr[data-grant-id] button"),
    ]);
    expect(question).toContain(grantClientName);
    expect(await page.locator("tr[data-grant-id]").count()).toBe(0);
    expect(await page.locator('p.notice[role="status"]').textContent()).toContain("disconnected");
    const consents = await db.owner.client`
      select id from north_auth.oauth_consent where user_id = ${ws.member.userId}`;
    expect(consents).toEqual([]);
    const [row] = await db.owner.client`
      select outcome, reason from audit_events where tool = 'grant_revoke'`;
    expect(row).toEqual({ outcome: "revoked", reason: "manager" });
  });

  it("downloads a member's working profile as a JSON attachment, audited as a read", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/members/${ws.member.userId}`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click(`a[href="/admin/members/${ws.member.userId}/profile.json"]`),
    ]);
    expect(download.suggestedFilename()).toBe(`north-working-profile-${ws.member.userId}.json`);
    const saved = JSON.parse(await readFile((await download.path()) ?? "", "utf8"));
    expect(saved.member.userId).toBe(ws.member.userId);
    expect(saved.entries.map((e: { answer: string }) => e.answer)).toEqual(
      ANSWERS.map((a) => a.answer),
    );
    expect(saved.entries[0]).toMatchObject({
      question: ANSWERS[0]?.question,
      questionSource: "recorded",
      answerVersion: 1,
    });
    expect(JSON.stringify(saved)).not.toContain(MANAGER_ANSWER.answer);

    const response = await page
      .context()
      .request.get(`${base}/admin/members/${ws.member.userId}/profile.json`);
    expect(response.status()).toBe(200);
    expect(response.headers()["content-disposition"]).toMatch(/^attachment; filename="/);
    expect(response.headers()["content-type"]).toContain("application/json");
    expect(response.headers()["cache-control"]).toBe("no-store");
    const [row] = await db.owner.client`
      select outcome, affected from audit_events
      where tool = 'admin_profile_export' order by occurred_at desc limit 1`;
    expect(row).toEqual({ outcome: "read", affected: 2 });
  });

  it("answers 404 for another organisation's member, an unknown id or a malformed one", async () => {
    const page = await signedIn(tokens.manager);
    for (const id of [other.member.userId, randomUUID(), "not-a-uuid"]) {
      for (const path of [`/admin/members/${id}`, `/admin/members/${id}/profile.json`]) {
        const response = await page.goto(`${base}${path}`);
        expect(response?.status()).toBe(404);
        const text = (await page.textContent("main")) ?? "";
        expect(text).toContain("Not found");
        expect(text).not.toContain(OTHER_ANSWER);
        expect(text).not.toContain("Elsewhere");
      }
    }
    // Nor can a forged form revoke another organisation's token, through any member's URL.
    await page.goto(`${base}/admin/members/${ws.member.userId}`);
    const csrf = await page.locator('input[name="csrf_token"]').first().inputValue();
    for (const userId of [ws.member.userId, other.member.userId]) {
      const forged = await page
        .context()
        .request.post(`${base}/admin/members/${userId}/tokens/revoke`, {
          form: { csrf_token: csrf, token_id: tokenIds.other },
          maxRedirects: 0,
        });
      expect(forged.status()).toBe(404);
    }
    expect((await listTools(tokens.other)).status).toBe(200);
    // And a form without the session's CSRF token changes nothing.
    const noCsrf = await page
      .context()
      .request.post(`${base}/admin/members/${ws.member.userId}/tokens/revoke`, {
        form: { token_id: tokenIds.kept },
        maxRedirects: 0,
      });
    expect(noCsrf.status()).toBe(403);
    expect((await listTools(tokens.kept)).status).toBe(200);
  });

  it("refuses an ordinary member, even one holding an admin-scoped token", async () => {
    const page = await signedIn(tokens.memberAdmin);
    expect(await page.textContent("main")).toContain("This console is for workspace managers");
    for (const path of ["/admin/members", `/admin/members/${ws.member.userId}/profile.json`]) {
      const response = await page.goto(`${base}${path}`);
      expect(new URL(page.url()).pathname).toBe("/admin/login");
      expect(await response?.text()).not.toContain(ANSWERS[0]?.answer);
    }
  });
});

describe("the Working profiles page", () => {
  it("lists every member in one table, with members who have not onboarded", async () => {
    const page = await signedIn(tokens.manager);
    expect(page.url()).toBe(`${base}/admin/profiles`);
    expect(await page.locator("thead th").allTextContents()).toEqual([
      "Member",
      "Question",
      "Answer",
      "Version",
      "Updated",
    ]);
    expect(await page.locator("table").count()).toBe(1);
    expect(await page.locator(".table-wrap > table").count()).toBe(1);
    expect(await page.locator("tbody td:not([data-label])").count()).toBe(0);
    const text = (await page.textContent("main")) ?? "";
    expect(text).toContain("transcription of what the lawyer said");
    expect(text).not.toContain(OTHER_ANSWER);

    const waiting = page.locator(`tr[data-member-id="${quiet.userId}"]`);
    expect(await waiting.getAttribute("data-onboarded")).toBe("false");
    expect(await waiting.textContent()).toContain("Not onboarded");
    expect(await page.locator(`tr[data-member-id="${ws.member.userId}"]`).count()).toBe(2);
    expect(await page.locator(`tr[data-member-id="${removed.userId}"]`).textContent()).toContain(
      "Removed",
    );
    expect(await page.locator("tr[data-question-id]").count()).toBe(4);
    for (const time of await page.locator("tr[data-question-id] time").allTextContents()) {
      expect(time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    }
    // One download link per member with answers, to the same endpoint as the member's page.
    const links = await page
      .locator('a[href$="/profile.json"]')
      .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(links.sort()).toEqual(
      [ws.member.userId, ws.manager.userId, removed.userId]
        .map((id) => `/admin/members/${id}/profile.json`)
        .sort(),
    );
    await page.screenshot({ path: "/tmp/north-admin-profiles-all.png", fullPage: true });
  });
});

describe("on a phone", () => {
  it("never scrolls the page sideways at 390 px: the tables reflow", async () => {
    const page = await signedIn(tokens.manager);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      "/admin/members",
      `/admin/members/${ws.member.userId}`,
      "/admin/profiles",
    ]) {
      await page.goto(`${base}${path}`);
      const width = Number(await page.evaluate("document.documentElement.scrollWidth"));
      expect(width, path).toBeLessThanOrEqual(390);
    }
  });
});

describe("the Members definer functions", () => {
  it("refuse an ordinary member and a requester who is not the tenant", async () => {
    const asMember = { organizationId: ws.organizationId, requesterId: ws.member.userId };
    const results = await withTenant(db.app.db, ws.member, async (tx) => [
      await readMemberOverview(tx, asMember),
      await listApiTokensForAdmin(tx, asMember),
      await listApiTokensForAdmin(tx, { ...asMember, userId: ws.member.userId }),
      await revokeApiTokenForAdmin(tx, { ...asMember, tokenId: tokenIds.kept }),
      // Naming the manager does not help: the requester must be the transaction's tenant.
      await readMemberOverview(tx, { ...asMember, requesterId: ws.manager.userId }),
    ]);
    expect(results).toEqual(Array(5).fill({ ok: false }));
    expect((await listTools(tokens.kept)).status).toBe(200);
  });

  it("keep a manager to their own organisation and never return a hash", async () => {
    const asOther = { organizationId: other.organizationId, requesterId: other.manager.userId };
    const [overview, listed, revoke, foreign] = await withTenant(
      db.app.db,
      other.manager,
      async (tx) => [
        await readMemberOverview(tx, asOther),
        await listApiTokensForAdmin(tx, { ...asOther, userId: ws.member.userId }),
        await revokeApiTokenForAdmin(tx, { ...asOther, tokenId: tokenIds.kept }),
        await readMemberOverview(tx, { ...asOther, organizationId: ws.organizationId }),
      ],
    );
    expect(overview.ok && overview.members.map((m) => m.userId).sort()).toEqual(
      [other.manager.userId, other.member.userId].sort(),
    );
    expect(listed).toEqual({ ok: true, tokens: [] });
    expect(revoke).toEqual({ ok: true, revoked: false });
    expect(foreign).toEqual({ ok: false });
    expect((await listTools(tokens.kept)).status).toBe(200);

    const columns = await withTenant(db.app.db, ws.manager, (tx) =>
      tx.execute(
        sql`select * from public.api_tokens_for_admin(${ws.organizationId}::uuid, ${ws.manager.userId}::uuid, null)`,
      ),
    );
    expect(Object.keys(columns[0] ?? {}).sort()).toEqual(
      ["created_at", "expires_at", "id", "last_used_at", "revoked_at", "scopes", "user_id"].sort(),
    );
  });
});
