import { createApiToken, setSsoConnection } from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { follow } from "../support/console.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import {
  authorizationRequest,
  authorizeAndExchange,
  principalOf,
  registerClient,
} from "../support/oauth-requests.ts";
import {
  decide,
  mcpStatus,
  signInWithToken,
  TEST_SECRET_KEY,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * What an independent attacker found in the first version of decision 029's grant records, each
 * run against that version and shown to succeed there: a remembered consent reused by a sign-in
 * that did not open it (an empty narrowing passing the request on as it was; a leaked token's
 * session minting tokens under the member's own grant, and after its revocation), a refresh
 * smuggled past North's checks with a repeated parameter, a thief's token surviving a re-consent
 * within the same second, a refused consent revoking the working grant, and a token sign-in
 * outliving the organisation's move to an IdP.
 */

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];

const { db, server, newPage } = useSignInSuite();

const scopesOf = (accessToken: string) => String(decodeJwt(accessToken).scope).split(" ");
const tokenFor = (member: Workspace["member"], scopes: string[]) =>
  createApiToken(db.owner.db, { ...member, scopes, expiresAt: null });

/** A first connection of `client`, consented with `token`: the member's remembered consent. */
async function consented(
  client: { clientId: string; redirectUri: string },
  token: string,
  scope: string | null = null,
) {
  const first = await authorizeAndExchange(server, await newPage(), client, scope, async (p) => {
    await signInWithToken(p, token);
    await decide(p, "allow");
  });
  if (!first.tokens?.refresh_token) throw new Error("the first connection got no tokens");
  return first.tokens;
}

/**
 * Another authorization of the same client, signed in with `token`: whether North asked for
 * consent (then the test goes no further) or the library answered with a code at once (then it
 * is exchanged).
 */
async function reauthorized(
  client: { clientId: string; redirectUri: string },
  token: string,
  scope: string | null,
) {
  let sawConsent = false;
  const outcome = await authorizeAndExchange(server, await newPage(), client, scope, async (p) => {
    await signInWithToken(p, token);
    await p.waitForURL((url) => ["/sign-in/consent", "/callback"].includes(url.pathname));
    sawConsent = new URL(p.url()).pathname === "/sign-in/consent";
    if (sawConsent) throw new Error("consent asked");
  }).catch((error: Error) => {
    if (sawConsent && error.message.startsWith("consent asked")) return { tokens: null };
    throw error;
  });
  return { sawConsent, tokens: outcome.tokens };
}

describe("a remembered consent is reused only by the sign-in that opened its grant", () => {
  it("a manager's read-only token asking for admin alone gets no admin from the manager's consent", async () => {
    const ws = await createWorkspace(db.owner.db);
    const full = await tokenFor(ws.manager, [...MEMBER_SCOPES, "admin"]);
    const readOnly = await tokenFor(ws.manager, ["memory:read"]);
    const client = await registerClient(server.base, "Manager's host");
    await consented(client, full.token, [...MEMBER_SCOPES, "admin"].join(" "));
    const attack = await reauthorized(client, readOnly.token, "admin");
    expect(attack.sawConsent).toBe(true);
    expect(attack.tokens).toBeNull();
  });

  it("a read-only token asking for the write scopes alone gets none of them", async () => {
    const ws = await createWorkspace(db.owner.db);
    const full = await tokenFor(ws.member, MEMBER_SCOPES);
    const readOnly = await tokenFor(ws.member, ["memory:read"]);
    const client = await registerClient(server.base);
    await consented(client, full.token);
    const attack = await reauthorized(client, readOnly.token, "memory:write profile:write");
    expect(attack.sawConsent).toBe(true);
    expect(attack.tokens).toBeNull();
  });

  it("a leaked token's sign-in cannot mint tokens under the grant the member's own token opened", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const leaked = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base, "Claude Code");
    await consented(client, own.token);
    const attack = await reauthorized(client, leaked.token, null);
    expect(attack.sawConsent).toBe(true);
    expect(attack.tokens).toBeNull();
  });

  it("the member's own sign-in reuses the remembered consent without asking", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    await consented(client, own.token);
    const again = await reauthorized(client, own.token, null);
    expect(again.sawConsent).toBe(false);
    expect(await mcpStatus(server.mcpUrl, again.tokens?.access_token ?? "")).toBe(200);
  });

  it("a browser session opened with a token mints nothing once that token is revoked", async () => {
    const ws = await createWorkspace(db.owner.db);
    const leaked = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base, "Claude Code");
    // The attacker signs in with the leaked token (on a decoy authorization) …
    const page = await newPage();
    const decoy = await registerClient(server.base, "Decoy");
    await page.goto(authorizationRequest(server.base, decoy, null).url.toString());
    await signInWithToken(page, leaked.token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    // … the token is revoked, and the same browser tries to connect another client.
    await db.owner.client`update api_tokens set revoked_at = now() where id = ${leaked.id}`;
    await page.goto(authorizationRequest(server.base, client, null).url.toString());
    expect(await page.locator('input[name="token"]').count()).toBe(1);
    expect(await page.locator('button[name="decision"]').count()).toBe(0);
  });

  it("every access token is capped by what opened its grant, whatever scopes it names", async () => {
    const ws = await createWorkspace(db.owner.db);
    const full = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    const tokens = await consented(client, full.token);
    expect(scopesOf(tokens.access_token)).toContain("memory:write");
    // The record of what opened the grant is what the resource server obeys, not the token.
    await db.owner.client`
      update north_auth.oauth_grant set scope_cap = array['memory:read']::text[]
      where user_id = ${ws.member.userId}`;
    const principal = await principalOf(db, server, tokens.access_token);
    expect(principal?.scopes).toEqual(["memory:read"]);
  });
});

describe("the token endpoint reads each parameter once", () => {
  it("refuses a refresh that names its refresh token twice", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    const tokens = await consented(client, own.token);
    await db.owner.client`update api_tokens set revoked_at = now() where id = ${own.id}`;
    const body = new URLSearchParams();
    body.append("grant_type", "refresh_token");
    body.append("refresh_token", "not-a-refresh-token");
    body.append("refresh_token", tokens.refresh_token ?? "");
    body.append("client_id", client.clientId);
    body.append("resource", server.mcpUrl);
    const smuggled = await fetch(`${server.base}/oauth/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
    expect(smuggled.status).toBe(400);
    expect(((await smuggled.json()) as { error: string }).error).toBe("invalid_request");
    // Nothing rotated: the one refresh token is still the consent's own.
    const [rows] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from north_auth.oauth_refresh_token
      where user_id = ${ws.member.userId}`;
    expect(rows?.n).toBe(1);
  });
});

describe("a re-consent and a refused consent", () => {
  it("a token the thief minted just before the member reconnects is refused after it", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const newer = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    const first = await consented(client, own.token);
    // The thief refreshes; at once the member reconnects, signed in with their newer token, so
    // North asks for consent and a new grant starts.
    const stolen = await fetch(`${server.base}/oauth/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: first.refresh_token ?? "",
        client_id: client.clientId,
        resource: server.mcpUrl,
      }),
    });
    const thief = (await stolen.json()) as { access_token: string };
    expect(await mcpStatus(server.mcpUrl, thief.access_token)).toBe(200);
    const again = await consented(client, newer.token);
    expect(await mcpStatus(server.mcpUrl, again.access_token)).toBe(200);
    expect(await mcpStatus(server.mcpUrl, thief.access_token)).toBe(401);
  });

  it("a consent page whose request no longer holds shows North's page and leaves the grant", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const newer = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    const tokens = await consented(client, own.token);
    // Signed in with another token: North asks for consent before a new grant replaces this one.
    const page = await newPage();
    await page.goto(authorizationRequest(server.base, client, null).url.toString());
    await signInWithToken(page, newer.token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    // The signed request is tampered with (or simply went stale on a page left open).
    const form = page.locator('form[action="/sign-in/consent"] input[name="continue"]');
    const signed = (await form.getAttribute("value")) ?? "";
    await form.evaluate(
      (input, value) => input.setAttribute("value", value),
      signed.replace(/sig=[^&]+/, "sig=forged"),
    );
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.click('button[name="decision"][value="allow"]'),
    ]);
    expect(answer.status()).toBe(400);
    expect(answer.headers()["content-type"]).toContain("text/html");
    expect(await page.textContent("main")).toContain("no longer valid");
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(200);
  });
});

describe("an organisation that moves to an IdP", () => {
  it("ends its token sign-ins: sessions mint nothing, grants opened by token are refused", async () => {
    const ws = await createWorkspace(db.owner.db);
    const own = await tokenFor(ws.member, MEMBER_SCOPES);
    const client = await registerClient(server.base);
    const tokens = await consented(client, own.token);
    const page = await newPage();
    const other = await registerClient(server.base, "Another host");
    await page.goto(authorizationRequest(server.base, other, null).url.toString());
    await signInWithToken(page, own.token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    await setSsoConnection(db.owner.db, {
      organizationId: ws.organizationId,
      issuer: "https://idp.moving-firm.example",
      clientId: "north",
      clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt("secret"),
      domains: [`moving-${ws.organizationId.slice(0, 8)}.example`],
    });
    expect(await mcpStatus(server.mcpUrl, tokens.access_token)).toBe(401);
    await follow(page, 'button[name="decision"][value="allow"]');
    expect(new URL(page.url()).origin, "North's refusal, not the client's callback").toBe(
      server.base,
    );
    expect(await page.textContent("main")).toContain("no longer valid");
  });
});
