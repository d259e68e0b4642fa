import {
  addMember,
  authorizationServerTables as ast,
  createOrganization,
  freePort,
  setSsoConnection,
} from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import { decodeJwt } from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { connectMcpClient } from "../support/mcp-client.ts";
import { signInAtTestIdp, startTestIdp, type TestIdp } from "../support/oidc-idp.ts";
import {
  connect,
  decide,
  loopbackRedirectUri,
  type SignInServer,
  signInWithEmail,
  startSignInServer,
  TEST_SECRET_KEY,
  TestOAuthClient,
} from "../support/sign-in.ts";

let db: TestDatabase;
let server: SignInServer;
let idp: TestIdp;
let browser: Browser;
let organizationId: string;
let member: { userId: string };
let serverUrl: string;

const IDP_CLIENT = { id: "north-at-firm", secret: "idp-client-secret-value" };

/**
 * Where the IdP puts the email claims: oidc-provider's default and Okta's (a thin ID token, the
 * claims at the userinfo endpoint), and Google's (in the ID token). Every case runs against both,
 * each with its own database, server and IdP.
 */
const VARIANTS: [label: string, idTokenClaims: boolean][] = [
  ["claims at userinfo (thin ID token)", false],
  ["claims in the ID token", true],
];

async function startSuite(idTokenClaims: boolean) {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  serverUrl = `${server.base}/mcp`;
  idp = await startTestIdp({
    idTokenClaims,
    clients: [
      {
        client_id: IDP_CLIENT.id,
        client_secret: IDP_CLIENT.secret,
        redirect_uris: [`${server.base}/sign-in/callback`],
      },
    ],
    accounts: [
      { sub: "idp-member", email: "avocate@firm.example", email_verified: true, name: "Avocate" },
      { sub: "idp-stranger", email: "visitor@firm.example", email_verified: true, name: "V" },
      { sub: "idp-unverified", email: "clerc@firm.example", email_verified: false, name: "C" },
      // Another account at the IdP that claims the already-bound member's email.
      { sub: "idp-imposter", email: "avocate@firm.example", email_verified: true, name: "I" },
    ],
  });
  browser = await launchChromium();
  const org = await createOrganization(db.owner.db, { name: "Cabinet Exemple" });
  organizationId = org.id;
  member = await addMember(db.owner.db, { organizationId, email: "Avocate@firm.example" });
  await addMember(db.owner.db, { organizationId, email: "clerc@firm.example" });
  await setSsoConnection(db.owner.db, {
    organizationId,
    issuer: idp.issuer,
    clientId: IDP_CLIENT.id,
    clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt(IDP_CLIENT.secret),
    domains: ["firm.example"],
  });
}

async function stopSuite() {
  await browser?.close();
  await idp?.stop();
  await server?.close();
  await db?.drop();
}

const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();
const nextClient = async () => new TestOAuthClient(await loopbackRedirectUri());

async function auditRows(tool: string) {
  return db.owner.client<
    { outcome: string; reason: string | null; actor_id: string | null; fp: string | null }[]
  >`select outcome, reason, actor_id, target_fingerprint as fp from audit_events
    where organization_id = ${organizationId} and tool = ${tool} order by occurred_at`;
}

/** Drives the browser from the authorization URL through the email form to the IdP's login. */
async function throughIdp(page: Page, email: string, login: string) {
  await signInWithEmail(page, email);
  await page.waitForSelector('input[name="login"]');
  await signInAtTestIdp(page, login);
}

const SUITE = "sign-in through the organisation's identity provider, %s";

describe.each(VARIANTS)(SUITE, (_label, idTokenClaims) => {
  beforeAll(() => startSuite(idTokenClaims));
  afterAll(stopSuite);

  it("finds the IdP by email domain, maps the verified identity to the member and binds it", async () => {
    const client = await nextClient();
    let consentText = "";
    const { result } = await connect(serverUrl, client, await newPage(), async (page) => {
      await throughIdp(page, "avocate@firm.example", "avocate@firm.example");
      await page.waitForSelector('button[value="allow"]');
      consentText = (await page.textContent("main")) ?? "";
      await decide(page, "allow");
    });
    expect(result).toBe("AUTHORIZED");
    expect(consentText).toContain("Avocate@firm.example");
    expect(consentText).toContain("Cabinet Exemple");
    const tokens = client.tokens();
    expect(decodeJwt(tokens?.access_token ?? "").sub).toBe(member.userId);

    const mcp = await connectMcpClient(serverUrl, { authProvider: client, name: "connector" });
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    await mcp.close();

    const bound = await db.owner.client`
      select issuer, subject, user_id from member_identities where organization_id = ${organizationId}`;
    expect(bound).toEqual([{ issuer: idp.issuer, subject: "idp-member", user_id: member.userId }]);
    const signIns = await auditRows("sign_in");
    expect(signIns.at(-1)).toMatchObject({
      outcome: "created",
      reason: "idp",
      actor_id: member.userId,
    });
  });

  it("refuses another IdP account that claims a bound member's email", async () => {
    const page = await newPage();
    const client = await nextClient();
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl })).toBe("REDIRECT");
    await page.goto(String(client.authorizationUrl));
    await throughIdp(page, "avocate@firm.example", "idp-imposter");
    expect(await page.textContent("h1")).toBe("Not a member");
    expect((await auditRows("sign_in")).at(-1)).toMatchObject({
      outcome: "refused",
      reason: "bound_elsewhere",
      actor_id: null,
    });
  });

  it("refuses a person who is not a member, with a clear page and no grant", async () => {
    const page = await newPage();
    const client = await nextClient();
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl })).toBe("REDIRECT");
    const response = page.waitForResponse((r) => r.url().includes("/sign-in/callback"));
    await page.goto(String(client.authorizationUrl));
    await throughIdp(page, "visitor@firm.example", "visitor@firm.example");
    expect((await response).status()).toBe(403);
    expect(await page.textContent("main")).toContain("visitor@firm.example is not a member");
    const refusal = (await auditRows("sign_in")).at(-1);
    expect(refusal).toMatchObject({ outcome: "refused", reason: "not_member", actor_id: null });
    expect(refusal?.fp).toMatch(/^[0-9a-f]{64}$/);
    const consents = await db.owner.db.select().from(ast.oauthConsent);
    expect(consents.filter((c) => c.clientId === client.clientInformation()?.client_id)).toEqual(
      [],
    );
  });

  it("refuses an identity whose email the IdP has not verified", async () => {
    const page = await newPage();
    const client = await nextClient();
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl })).toBe("REDIRECT");
    await page.goto(String(client.authorizationUrl));
    await throughIdp(page, "clerc@firm.example", "clerc@firm.example");
    expect(await page.textContent("h1")).toBe("Email not verified");
    expect((await auditRows("sign_in")).at(-1)).toMatchObject({
      outcome: "refused",
      reason: "email_unverified",
    });
    const bound = await db.owner.client`
      select subject from member_identities where subject = 'idp-unverified'`;
    expect(bound).toEqual([]);
  });

  it("says the firm's sign-in is unreachable when its IdP is down, and creates nothing", async () => {
    const downOrg = await createOrganization(db.owner.db, { name: "Down firm" });
    await addMember(db.owner.db, { organizationId: downOrg.id, email: "someone@down.example" });
    const closedPort = await freePort();
    await setSsoConnection(db.owner.db, {
      organizationId: downOrg.id,
      issuer: `http://127.0.0.1:${closedPort}`,
      clientId: "x",
      clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt("y"),
      domains: ["down.example"],
    });
    const sessions = async () =>
      (
        await db.owner.client<{ count: number }[]>`
        select count(*)::int as count from north_auth.session`
      )[0]?.count;
    const sessionsBefore = await sessions();
    const page = await newPage();
    const client = await nextClient();
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl })).toBe("REDIRECT");
    await page.goto(String(client.authorizationUrl));
    const response = page.waitForResponse((r) => r.url().endsWith("/sign-in/email"));
    await signInWithEmail(page, "someone@down.example");
    expect((await response).status()).toBe(503);
    expect(await page.textContent("h1")).toBe("Your firm's sign-in is unreachable");
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => c.name)).toEqual([]);
    expect(await sessions()).toBe(sessionsBefore);
    const [refusal] = await db.owner.client`
      select outcome, reason from audit_events where organization_id = ${downOrg.id}`;
    expect(refusal).toEqual({ outcome: "refused", reason: "idp_unreachable" });
  });

  it("an email whose domain no organisation claims gets the form again with an explanation", async () => {
    const page = await newPage();
    const client = await nextClient();
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    expect(await auth(client, { serverUrl })).toBe("REDIRECT");
    await page.goto(String(client.authorizationUrl));
    await signInWithEmail(page, "someone@nowhere.example");
    expect(await page.textContent('[role="alert"]')).toContain("No organisation signs in");
  });

  it("keeps emails and identities out of the logs and the ledger", async () => {
    const logs = server.logs.join("");
    for (const secret of ["avocate@firm.example", "visitor@firm.example", "idp-member"]) {
      expect(logs.toLowerCase()).not.toContain(secret);
    }
    const ledger = JSON.stringify(
      await db.owner.client`select * from audit_events where organization_id = ${organizationId}`,
    );
    expect(ledger).not.toContain("@firm.example");
    expect(ledger).not.toContain(IDP_CLIENT.secret);
  });
});
