/**
 * Issue 21, point 10: an IdP with a thin ID token (oidc-provider's default, Okta's) gives the
 * email claims only at its userinfo endpoint, and North reads them there with openid-client's
 * `fetchUserInfo`, which refuses an answer whose `sub` is not the ID token's. oidc-provider never
 * answers for another subject, so a proxy in front of the real IdP (test/support/oidc-idp.ts,
 * `rewriteUserinfo`) does, as a mixed-up or tampered userinfo endpoint would: the attacker signs in
 * as themselves and the userinfo answer names a partner of the firm. Without the check, North
 * would bind the attacker's IdP account to the partner.
 */
import { addMember, authorizationServerTables as ast } from "@north/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { startFirmIdp } from "../support/firm-idp.ts";
import { signInAtTestIdp, type TestIdp } from "../support/oidc-idp.ts";
import {
  connect,
  decide,
  loopbackRedirectUri,
  type SignInServer,
  signInWithEmail,
  startSignInServer,
  TestOAuthClient,
} from "../support/sign-in.ts";

const PARTNER = { sub: "idp-partner", email: "partner@firm.example", email_verified: true };

let db: TestDatabase;
let server: SignInServer;
let idp: TestIdp;
let browser: Browser;
let organizationId: string;
let partner: { userId: string };

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  ({ idp, organizationId } = await startFirmIdp(
    db,
    server,
    {
      name: "Cabinet Exemple",
      domains: ["firm.example"],
      accounts: [
        { ...PARTNER, name: "Partner" },
        { sub: "idp-attacker", email: "intern@firm.example", email_verified: true, name: "I" },
        { sub: "idp-associate", email: "associate@firm.example", email_verified: true, name: "A" },
        { sub: "idp-flaky", email: "flaky@firm.example", email_verified: true, name: "F" },
      ],
    },
    {
      rewriteUserinfo: (claims) => {
        if (claims.sub === "idp-attacker") return { ...PARTNER };
        if (claims.sub === "idp-flaky") return null;
        return claims;
      },
    },
  ));
  browser = await launchChromium();
  partner = await addMember(db.owner.db, { organizationId, email: PARTNER.email });
  for (const email of ["intern@firm.example", "associate@firm.example", "flaky@firm.example"]) {
    await addMember(db.owner.db, { organizationId, email });
  }
});
afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await server?.close();
  await db?.drop();
});

const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();

/** Opens an authorization in a fresh browser and signs in at the IdP as the account `sub`. */
async function signInAs(email: string, sub: string): Promise<Page> {
  const page = await newPage();
  const client = new TestOAuthClient(await loopbackRedirectUri());
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  expect(await auth(client, { serverUrl: `${server.base}/mcp` })).toBe("REDIRECT");
  await page.goto(String(client.authorizationUrl));
  await signInWithEmail(page, email);
  await page.waitForSelector('input[name="login"]');
  await signInAtTestIdp(page, sub);
  return page;
}

const lastSignIn = async () =>
  (
    await db.owner.client`select outcome, reason from audit_events
      where organization_id = ${organizationId} and tool = 'sign_in' order by occurred_at desc limit 1`
  )[0];

describe("userinfo claims behind a thin ID token", () => {
  it("refuses a userinfo answer about another subject than the ID token's, and binds nothing", async () => {
    const page = await signInAs("intern@firm.example", "idp-attacker");
    expect(await page.textContent("h1")).toBe("Sign-in failed");
    expect(await lastSignIn()).toEqual({ outcome: "refused", reason: "idp_invalid" });
    expect(await db.owner.client`select subject from member_identities`).toEqual([]);
    const consents = await db.owner.db.select().from(ast.oauthConsent);
    expect(consents.filter((c) => c.userId === partner.userId)).toEqual([]);
  });

  it("signs a member in with the email the userinfo endpoint gives for the ID token's subject", async () => {
    const client = new TestOAuthClient(await loopbackRedirectUri());
    const { result } = await connect(
      `${server.base}/mcp`,
      client,
      await newPage(),
      async (page) => {
        await signInWithEmail(page, "associate@firm.example");
        await page.waitForSelector('input[name="login"]');
        await signInAtTestIdp(page, "idp-associate");
        await decide(page, "allow");
      },
    );
    expect(result).toBe("AUTHORIZED");
    expect(await db.owner.client`select subject from member_identities`).toEqual([
      { subject: "idp-associate" },
    ]);
  });

  it("says the firm's sign-in is unreachable when the userinfo endpoint drops the connection", async () => {
    const page = await signInAs("flaky@firm.example", "idp-flaky");
    expect(await page.textContent("h1")).toBe("Your firm's sign-in is unreachable");
    expect(await lastSignIn()).toEqual({ outcome: "refused", reason: "idp_unreachable" });
  });
});
