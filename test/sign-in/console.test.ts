import { addMember, createOrganization, setMemberRole, setSsoConnection } from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { follow, launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
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
let manager: { userId: string };

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  idp = await startTestIdp({
    clients: [
      {
        client_id: "north-console",
        client_secret: "console-idp-secret",
        redirect_uris: [`${server.base}/sign-in/callback`],
      },
    ],
    accounts: [
      { sub: "m-1", email: "associee@etude.example", email_verified: true, name: "Associée" },
      { sub: "m-2", email: "stagiaire@etude.example", email_verified: true, name: "Stagiaire" },
    ],
  });
  browser = await launchChromium();
  organizationId = (await createOrganization(db.owner.db, { name: "Étude" })).id;
  manager = await addMember(db.owner.db, {
    organizationId,
    email: "associee@etude.example",
    role: "manager",
  });
  await addMember(db.owner.db, { organizationId, email: "stagiaire@etude.example" });
  await setSsoConnection(db.owner.db, {
    organizationId,
    issuer: idp.issuer,
    clientId: "north-console",
    clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt("console-idp-secret"),
    domains: ["etude.example"],
  });
});
afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await server?.close();
  await db?.drop();
});

/** From the console's login page, through the firm's IdP. */
async function consoleSignIn(email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.base}/admin/profiles`);
  expect(new URL(page.url()).pathname).toBe("/admin/login");
  await page.fill('form[action="/sign-in/email"] input[name="email"]', email);
  await page.click('form[action="/sign-in/email"] button[type="submit"]');
  await page.waitForSelector('input[name="login"]');
  await signInAtTestIdp(page, email);
  return page;
}

describe("the console signs managers in through the organisation's IdP", () => {
  it("opens a server-side session whose cookie is not a token", async () => {
    const page = await consoleSignIn("associee@etude.example");
    expect(new URL(page.url()).pathname).toBe("/admin/profiles");
    const cookie = (await page.context().cookies()).find((c) => c.name === "north_admin");
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [session] = await db.owner.client`
      select token_id, user_id from admin_sessions where user_id = ${manager.userId}`;
    expect(session).toEqual({ token_id: null, user_id: manager.userId });
    const [audit] = await db.owner.client`
      select outcome, reason from audit_events where tool = 'admin_sign_in' and actor_id = ${manager.userId}`;
    expect(audit).toEqual({ outcome: "created", reason: "idp" });
  });

  it("refuses an ordinary member", async () => {
    const page = await consoleSignIn("stagiaire@etude.example");
    expect(await page.textContent("main")).toContain("This console is for workspace managers");
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "north_admin")).toBeUndefined();
    const [audit] = await db.owner.client`
      select outcome, reason from audit_events
      where tool = 'admin_sign_in' and organization_id = ${organizationId} and outcome = 'refused'`;
    expect(audit).toEqual({ outcome: "refused", reason: "not_manager" });
  });

  it("lists a member's connected app and revokes it: the app's next call is refused", async () => {
    const client = new TestOAuthClient(await loopbackRedirectUri(), undefined, "Cowork test");
    // The organisation has an IdP, so its members connect through it (SPEC §3a).
    const { result } = await connect(
      `${server.base}/mcp`,
      client,
      await (await browser.newContext()).newPage(),
      async (p) => {
        await signInWithEmail(p, "stagiaire@etude.example");
        await p.waitForSelector('input[name="login"]');
        await signInAtTestIdp(p, "stagiaire@etude.example");
        await decide(p, "allow");
      },
    );
    expect(result).toBe("AUTHORIZED");
    const access = client.tokens()?.access_token ?? "";
    const status = async () =>
      (
        await fetch(`${server.base}/mcp`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${access}`,
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        })
      ).status;
    expect(await status()).toBe(200);

    const page = await consoleSignIn("associee@etude.example");
    await page.goto(`${server.base}/admin/connections`);
    const row = page.locator("tr", { hasText: "Cowork test" });
    expect(await row.textContent()).toContain("stagiaire@etude.example");
    await follow(page, row.locator('button[type="submit"]'));
    expect(new URL(page.url()).search).toBe("?revoked=1");
    expect(await page.locator("tr", { hasText: "Cowork test" }).count()).toBe(0);
    expect(await status()).toBe(401);
    const [audit] = await db.owner.client`
      select outcome, reason, actor_id from audit_events where tool = 'grant_revoke'`;
    expect(audit).toEqual({ outcome: "revoked", reason: "manager", actor_id: manager.userId });
  });

  it("ends an IdP session once the manager is demoted", async () => {
    const page = await consoleSignIn("associee@etude.example");
    expect(new URL(page.url()).pathname).toBe("/admin/profiles");
    await setMemberRole(db.owner.db, { organizationId, userId: manager.userId, role: "member" });
    await page.goto(`${server.base}/admin/profiles`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    await setMemberRole(db.owner.db, { organizationId, userId: manager.userId, role: "manager" });
  });
});
