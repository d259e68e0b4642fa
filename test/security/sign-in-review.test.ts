/**
 * Four findings of an independent attacker against the finished sign-in (issue 21), each
 * replayed here as it was reported, expecting North to hold: an IdP identity outside the
 * organisation's email domains, a consent heading that reads as another site through Unicode
 * look-alikes, a malformed form body, and a replayed authorization code.
 */
import { addMember, createApiToken, createOrganization, setSsoConnection } from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import { signInAtTestIdp, startTestIdp, type TestIdp } from "../support/oidc-idp.ts";
import {
  connectWithToken,
  loopbackRedirectUri,
  mcpStatus,
  type SignInServer,
  signInWithEmail,
  startSignInServer,
  TEST_SECRET_KEY,
  TestOAuthClient,
} from "../support/sign-in.ts";

const IDP_CLIENT = { id: "north-at-firm", secret: "idp-client-secret-value" };

let db: TestDatabase;
let server: SignInServer;
let idp: TestIdp;
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  idp = await startTestIdp({
    clients: [
      {
        client_id: IDP_CLIENT.id,
        client_secret: IDP_CLIENT.secret,
        redirect_uris: [`${server.base}/sign-in/callback`],
      },
    ],
    accounts: [
      // A verified account at the firm's IdP whose email is outside the firm's domain.
      { sub: "idp-outsider", email: "counsel@partner.example", email_verified: true, name: "X" },
    ],
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await server?.close();
  await db?.drop();
});

const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();

/** A member of a workspace without an IdP, with a read-write API token to sign in with. */
async function memberToken() {
  const ws = await createWorkspace(db.owner.db);
  const { token } = await createApiToken(db.owner.db, {
    ...ws.member,
    scopes: ["profile:write", "memory:read", "memory:write"],
    expiresAt: null,
  });
  return { ...ws, token };
}

describe("an IdP identity outside the organisation's email domains (finding 7)", () => {
  it("is refused, even when a member holds that email, and binds nothing", async () => {
    const org = await createOrganization(db.owner.db, { name: "Cabinet" });
    const member = await addMember(db.owner.db, {
      organizationId: org.id,
      email: "counsel@partner.example",
    });
    await setSsoConnection(db.owner.db, {
      organizationId: org.id,
      issuer: idp.issuer,
      clientId: IDP_CLIENT.id,
      clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt(IDP_CLIENT.secret),
      domains: ["firm.example"],
    });
    const client = new TestOAuthClient(await loopbackRedirectUri());
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl: `${server.base}/mcp` })).toBe("REDIRECT");
    const page = await newPage();
    await page.goto(String(client.authorizationUrl));
    // Discovery by any address in the organisation's domain, then the IdP answers with an
    // email in a domain the organisation never configured.
    await signInWithEmail(page, "anyone@firm.example");
    await page.waitForSelector('input[name="login"]');
    const callback = page.waitForResponse((r) => r.url().includes("/sign-in/callback"));
    await signInAtTestIdp(page, "idp-outsider");
    expect((await callback).status()).toBe(403);
    expect(await page.textContent("main")).toContain("outside");
    const bound = await db.owner.client`
      select subject from member_identities where organization_id = ${org.id}`;
    expect(bound).toEqual([]);
    const [refusal] = await db.owner.client`
      select outcome, reason from audit_events
      where organization_id = ${org.id} and tool = 'sign_in' order by occurred_at desc limit 1`;
    expect(refusal).toEqual({ outcome: "refused", reason: "domain_not_allowed" });
    const consents = await db.owner.client`
      select 1 from north_auth.oauth_consent where user_id = ${member.userId}`;
    expect(consents).toEqual([]);
  });
});

describe("a DCR client's name written with Unicode look-alikes (finding 9)", () => {
  it.each([
    ["one dot leader", "Claude (claude\u2024ai)"],
    ["zero-width space", "claude\u200b.ai connector"],
    ["scheme split by a zero-width space", "https\u200b://claude\u2024ai"],
    ["full-width letters", "\uff43\uff4c\uff41\uff55\uff44\uff45.ai"],
  ])("%s: the consent heading never reads as claude.ai", async (_label, name) => {
    const { token } = await memberToken();
    const client = new TestOAuthClient(await loopbackRedirectUri(), undefined, name);
    let heading = "";
    await connectWithToken(server.base, await newPage(), token, {
      client,
      beforeConsent: async (page) => {
        heading = (await page.textContent("h1")) ?? "";
      },
    });
    expect(heading).toMatch(/^Allow .+ to use North\?$/);
    // What a person reads: the invisible characters gone, each look-alike as what it looks like.
    expect(heading.normalize("NFKC").replace(/\p{Cf}/gu, "")).not.toContain("claude.ai");
  });
});

describe("a malformed body on the sign-in forms (finding 10)", () => {
  it.each(["/sign-in/token", "/sign-in/email", "/sign-in/consent", "/sign-in/sign-out"])(
    "POST %s with a broken multipart body answers North's page with 400",
    async (path) => {
      const response = await fetch(`${server.base}${path}`, {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=zz" },
        body: "--zz\r\nbroken",
      });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(await response.text()).toContain("<h1>This form could not be read</h1>");
      expect(server.logs.some((line) => line.includes('"msg":"request failed"'))).toBe(false);
    },
  );

  it("reads only what North's forms send: a well-formed multipart form is refused too", async () => {
    const form = new FormData();
    form.set("email", "anyone@firm.example");
    const response = await fetch(`${server.base}/sign-in/email`, { method: "POST", body: form });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("<h1>This form could not be read</h1>");
    expect(response.headers.get("set-cookie") ?? "").not.toContain("north_sign_in");
  });
});

describe("a replayed authorization code (finding 11)", () => {
  /** The code at North's token endpoint again, as an interceptor or a retrying client sends it. */
  const redeem = (client: TestOAuthClient, code: string) =>
    fetch(`${server.base}/oauth/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientInformation()?.client_id ?? "",
        code_verifier: client.codeVerifier(),
        resource: `${server.base}/mcp`,
      }),
    });

  it("revokes the grant the code opened: the first redemption's access token stops working", async () => {
    const ws = await memberToken();
    // The SDK redeems the code (the first redemption: an interceptor's, if it won the race).
    const { client, landed, tokens } = await connectWithToken(
      server.base,
      await newPage(),
      ws.token,
    );
    const first = tokens?.access_token ?? "";
    expect(await mcpStatus(`${server.base}/mcp`, first)).toBe(200);
    const replay = await redeem(client, landed.searchParams.get("code") ?? "");
    expect(replay.status).toBe(400);
    expect(await mcpStatus(`${server.base}/mcp`, first)).toBe(401);
    const consents = await db.owner.client`
      select 1 from north_auth.oauth_consent where user_id = ${ws.member.userId}`;
    expect(consents).toEqual([]);
    const [revoked] = await db.owner.client`
      select tool, outcome, reason from audit_events
      where organization_id = ${ws.organizationId} and outcome = 'revoked'`;
    expect(revoked).toEqual({ tool: "grant_revoke", outcome: "revoked", reason: "code_reuse" });
  });

  it("leaves the grant alone when a code nobody redeemed is refused", async () => {
    const ws = await memberToken();
    const { client, tokens } = await connectWithToken(server.base, await newPage(), ws.token);
    const refused = await redeem(client, "a-code-north-never-issued");
    expect(refused.status).toBe(400);
    expect(await mcpStatus(`${server.base}/mcp`, tokens?.access_token ?? "")).toBe(200);
  });
});
