import {
  addMember,
  authorizationServerTables as ast,
  createApiToken,
  removeMember,
  revokeGrant,
  setSsoConnection,
} from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import { eq, sql } from "drizzle-orm";
import { decodeJwt } from "jose";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { follow } from "../support/console.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import {
  connect,
  connectWithToken,
  decide,
  loopbackRedirectUri,
  mcpStatus,
  refreshAt,
  signInWithToken,
  TEST_SECRET_KEY,
  TestOAuthClient,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * Attacks on the limits of a grant (issue 21, points 1–4 and the sign-out of 14; SPEC §3a, the
 * bullet "Every limit on a grant is kept on the server"; decision 029). Each was run against the
 * code before the fix and succeeded there.
 */

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];

const { db, server, newPage } = useSignInSuite();

const scopesOf = (accessToken: string) => String(decodeJwt(accessToken).scope).split(" ");

async function tokenFor(
  member: Workspace["member"],
  scopes: string[],
  expiresAt: Date | null = null,
) {
  return createApiToken(db.owner.db, { ...member, scopes, expiresAt });
}

/** Connected with an API token; the tokens, or the test fails here. */
async function connected(token: string, page?: Page) {
  const outcome = await connectWithToken(server.base, page ?? (await newPage()), token);
  expect(outcome.result).toBe("AUTHORIZED");
  if (!outcome.tokens?.refresh_token) throw new Error("no tokens");
  return { ...outcome, tokens: outcome.tokens, refreshToken: outcome.tokens.refresh_token };
}

/** A browser on North's sign-in page for a new authorization by `client` (never completed). */
async function atSignIn(client: TestOAuthClient, page?: Page): Promise<Page> {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  expect(await auth(client, { serverUrl: server.mcpUrl })).toBe("REDIRECT");
  const browserPage = page ?? (await newPage());
  await browserPage.goto(client.authorizationUrl?.toString() ?? "");
  return browserPage;
}

/**
 * The attack on a cookie-held cap: sign in with `token`, drop every cookie but the
 * authorization server's session (a browser may lose any cookie), then connect another client
 * in the same browser while the session lasts. Returns the scopes that client was granted.
 */
async function scopesAfterDroppingCookies(token: string, scope?: string): Promise<string[]> {
  const page = await atSignIn(new TestOAuthClient("http://127.0.0.1:1/callback"));
  await signInWithToken(page, token);
  await page.waitForSelector('button[name="decision"][value="allow"]');
  const context = page.context();
  const cookies = await context.cookies();
  await context.clearCookies();
  await context.addCookies(cookies.filter((cookie) => cookie.name.includes("session_token")));
  const client = new TestOAuthClient(await loopbackRedirectUri());
  client.scope = scope;
  const { result } = await connect(server.mcpUrl, client, page, (p) => decide(p, "allow"));
  expect(result).toBe("AUTHORIZED");
  return scopesOf(client.tokens()?.access_token ?? "");
}

describe("the scope cap of a token sign-in lives on the server", () => {
  it("a read-only token's session stays read-only when the browser drops its cookies", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, ["memory:read"]);
    const scopes = await scopesAfterDroppingCookies(token);
    expect(scopes).toContain("memory:read");
    expect(scopes).not.toContain("memory:write");
    expect(scopes).not.toContain("profile:write");
  });

  it("a manager's read-only token never becomes admin", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.manager, ["memory:read"]);
    // It asks for everything, admin included (as a step-up would).
    const scopes = await scopesAfterDroppingCookies(token, [...MEMBER_SCOPES, "admin"].join(" "));
    expect(scopes).toContain("memory:read");
    expect(scopes).not.toContain("admin");
    expect(scopes).not.toContain("memory:write");
  });

  it("a browser session North holds no record of grants nothing", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const page = await atSignIn(new TestOAuthClient("http://127.0.0.1:1/callback"));
    await signInWithToken(page, token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    // The record of how this session signed in is gone (as if it had never been written).
    await db.owner
      .client`delete from north_auth.sign_in_session where user_id = ${ws.member.userId}`;
    await follow(page, 'button[name="decision"][value="allow"]');
    expect(new URL(page.url()).origin, "North's refusal, not the client's callback").toBe(
      server.base,
    );
    expect(await page.textContent("main")).toContain("no longer valid");
    const consents = await db.owner.db
      .select({ id: ast.oauthConsent.id })
      .from(ast.oauthConsent)
      .where(eq(ast.oauthConsent.userId, ws.member.userId));
    expect(consents).toEqual([]);
  });
});

describe("a grant ends when what opened it ends", () => {
  it("revoking the API token that opened a grant ends its access and its refresh", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token, id } = await tokenFor(ws.member, MEMBER_SCOPES);
    const { client, tokens, refreshToken } = await connected(token);
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(200);
    await db.owner.client`update api_tokens set revoked_at = now() where id = ${id}`;
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expect((await refreshAt(server.base, client, refreshToken)).status).toBe(400);
  });

  it("an expired API token ends the grant it opened", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token, id } = await tokenFor(ws.member, MEMBER_SCOPES, new Date(Date.now() + 3600_000));
    const { client, tokens, refreshToken } = await connected(token);
    await db.owner
      .client`update api_tokens set expires_at = now() - interval '1 second' where id = ${id}`;
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expect((await refreshAt(server.base, client, refreshToken)).status).toBe(400);
  });

  it("refresh rotation never carries a grant past 30 days from its consent", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const { client, refreshToken } = await connected(token);
    // Consented ten days ago (moved into the past rather than waited for).
    const user = ws.member.userId;
    await db.owner
      .client`update north_auth.oauth_consent set created_at = created_at - interval '10 days' where user_id = ${user}`;
    await db.owner
      .client`update north_auth.oauth_refresh_token set created_at = created_at - interval '10 days', expires_at = expires_at - interval '10 days' where user_id = ${user}`;
    await db.owner.client`
      do $$ begin
        if to_regclass('north_auth.oauth_grant') is not null then
          update north_auth.oauth_grant set granted_at = granted_at - interval '10 days',
            expires_at = expires_at - interval '10 days';
        end if;
      end $$`;
    const rotated = await refreshAt(server.base, client, refreshToken);
    expect(rotated.status).toBe(200);
    const [newest] = await db.owner.client<{ days: number }[]>`
      select extract(epoch from expires_at - now()) / 86400 as days
      from north_auth.oauth_refresh_token where user_id = ${user} and revoked is null`;
    expect(Number(newest?.days)).toBeLessThan(20.01);
    expect(Number(newest?.days)).toBeGreaterThan(19.9);
  });

  it("a grant past its 30 days is refused on the next call and at refresh", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const { client, tokens, refreshToken } = await connected(token);
    await db.owner.client`
      update north_auth.oauth_grant set granted_at = now() - interval '31 days',
        expires_at = now() - interval '1 day' where user_id = ${ws.member.userId}`;
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expect((await refreshAt(server.base, client, refreshToken)).status).toBe(400);
  });

  it("an organisation with an IdP does not take pasted API tokens on the sign-in page", async () => {
    const ws = await createWorkspace(db.owner.db);
    await setSsoConnection(db.owner.db, {
      organizationId: ws.organizationId,
      issuer: "https://idp.firm-with-sso.example",
      clientId: "north",
      clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt("secret"),
      domains: ["firm-with-sso.example"],
    });
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const page = await atSignIn(new TestOAuthClient("http://127.0.0.1:1/callback"));
    // The next page, whichever it is: a token taken by mistake fails below at once.
    const answered = page.waitForEvent("load");
    await signInWithToken(page, token);
    await answered;
    expect(await page.locator('button[name="decision"]').count()).toBe(0);
    expect(await page.textContent("main")).toContain("identity provider");
    // Refused before any session opens: none stored for the member, no session cookie set.
    const sessions = await db.owner.client`
      select 1 from north_auth.session where user_id = ${ws.member.userId}`;
    expect(sessions).toHaveLength(0);
    const cookies = await page.context().cookies();
    expect(cookies.filter((cookie) => cookie.name.includes("session_token"))).toEqual([]);
    // The refusal is the only sign-in audited: none alongside it for a session.
    const audited = await db.owner.client`
      select reason from audit_events where organization_id = ${ws.organizationId} and tool = 'sign_in'`;
    expect(audited).toEqual([{ reason: "idp_required" }]);
  });
});

describe("member removal ends OAuth access", () => {
  it("removing a member ends their OAuth grants at once, and reinstating them revives none", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const { client, tokens, refreshToken } = await connected(token);
    const [row] = await db.owner.client<{ email: string }[]>`
      select email from members where user_id = ${ws.member.userId}`;
    await removeMember(db.owner.db, ws.member);
    const left = await db.owner.client`
      select 'consent' from north_auth.oauth_consent where user_id = ${ws.member.userId}
      union all select 'refresh' from north_auth.oauth_refresh_token
        where user_id = ${ws.member.userId} and revoked is null
      union all select 'session' from north_auth.session where user_id = ${ws.member.userId}`;
    expect(left).toHaveLength(0);
    await addMember(db.owner.db, { organizationId: ws.organizationId, email: row?.email ?? "" });
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    expect((await refreshAt(server.base, client, refreshToken)).status).toBe(400);
  });

  it("the token endpoint refuses a refresh for a member who is no longer active", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const { client, refreshToken } = await connected(token);
    // Inactive by any path, not only `member remove` (which also ends the grants themselves).
    await db.owner
      .client`update members set removed_at = now() where user_id = ${ws.member.userId}`;
    const refused = await refreshAt(server.base, client, refreshToken);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_grant");
  });
});

describe("a revocation cannot be undone by consenting again", () => {
  it("access tokens issued before a revoked grant stay refused after the member reconnects", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const first = await connected(token);
    const stolen = first.tokens.access_token;
    const [grant] = await db.owner.db
      .select({ id: ast.oauthConsent.id })
      .from(ast.oauthConsent)
      .where(eq(ast.oauthConsent.userId, ws.member.userId));
    await revokeGrant(db.owner.db, grant?.id ?? "");
    expect(await mcpStatus(server.mcpUrl, stolen)).toBe(401);
    // The member connects the same client again.
    const again = new TestOAuthClient(first.client.redirectUri);
    again.saveClientInformation(first.client.clientInformation() as never);
    const second = await connectWithToken(server.base, await newPage(), token, { client: again });
    expect(second.result).toBe("AUTHORIZED");
    expect(await mcpStatus(server.mcpUrl, second.tokens?.access_token ?? "")).toBe(200);
    expect(await mcpStatus(server.mcpUrl, stolen)).toBe(401);
  });
});

describe("the authorization server's browser session", () => {
  it("signs out, after which the same browser must sign in again to consent", async () => {
    const ws = await createWorkspace(db.owner.db);
    const { token } = await tokenFor(ws.member, MEMBER_SCOPES);
    const page = await atSignIn(new TestOAuthClient("http://127.0.0.1:1/callback"));
    await signInWithToken(page, token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    await follow(page, 'form[action="/sign-in/sign-out"] button');
    expect(await page.textContent("main")).toContain("signed out");
    // Another client's authorization in the same browser asks who you are again.
    await atSignIn(new TestOAuthClient("http://127.0.0.1:2/callback"), page);
    expect(await page.locator('input[name="token"]').count()).toBe(1);
    expect(await page.locator('button[name="decision"]').count()).toBe(0);
    const sessions = await db.owner.db
      .select({ id: ast.session.id })
      .from(ast.session)
      .where(sql`${ast.session.userId} = ${ws.member.userId}`);
    expect(sessions).toEqual([]);
  });
});
