/**
 * Issue 21, point 7: emails are compared after one documented normalisation
 * (packages/db/src/email.ts). PostgreSQL's `lower()` maps U+212A KELVIN SIGN onto "k", so an IdP
 * identity "\u212Aate@kanzlei.example" — an account anyone with a mailbox at a sloppy IdP can
 * create — was matched to the ASCII member "kate@kanzlei.example" and bound to her, after which
 * her own account was refused as "bound elsewhere". These attacks run through the real app, a
 * real oidc-provider and headless Chromium.
 */
import { addMember, normalizedEmailSql, normalizeEmail, removeMember } from "@north/db";
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

const KELVIN = "\u212A";

let db: TestDatabase;
let server: SignInServer;
let idp: TestIdp;
let browser: Browser;
let organizationId: string;
let kate: { userId: string };

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  ({ idp, organizationId } = await startFirmIdp(db, server, {
    name: "Kanzlei",
    domains: ["kanzlei.example"],
    // The claims in the ID token (Google's way), so that these attacks reach the email match
    // whatever the userinfo path does; test/sign-in/idp.test.ts runs both ways.
    idTokenClaims: true,
    accounts: [
      { sub: "idp-kate", email: "kate@kanzlei.example", email_verified: true, name: "Kate" },
      // The look-alike: a verified account whose address differs from Kate's by one character.
      { sub: "idp-kelvin", email: `${KELVIN}ate@kanzlei.example`, email_verified: true, name: "K" },
    ],
  }));
  browser = await launchChromium();
  kate = await addMember(db.owner.db, { organizationId, email: "kate@kanzlei.example" });
});
afterAll(async () => {
  await browser?.close();
  await idp?.stop();
  await server?.close();
  await db?.drop();
});

const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();

/** Drives the browser from the authorization URL through the email form to the IdP's login. */
async function throughIdp(page: Page, email: string, sub: string) {
  await signInWithEmail(page, email);
  await page.waitForSelector('input[name="login"]');
  await signInAtTestIdp(page, sub);
}

/**
 * The attack: an authorization started in a fresh browser, North's form given Kate's address
 * (it only finds the IdP, and a browser's email field refuses non-ASCII local parts), and the
 * look-alike account signing in at the IdP. Returns the page North answered with.
 */
async function lookalikeSignsIn(): Promise<Page> {
  const page = await newPage();
  const client = new TestOAuthClient(await loopbackRedirectUri());
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  expect(await auth(client, { serverUrl: `${server.base}/mcp` })).toBe("REDIRECT");
  await page.goto(String(client.authorizationUrl));
  await throughIdp(page, "kate@kanzlei.example", "idp-kelvin");
  return page;
}

const identities = () =>
  db.owner.client`select subject, user_id from member_identities
    where organization_id = ${organizationId} order by subject`;

describe("email look-alikes at sign-in", () => {
  it("refuses an IdP identity whose email is a KELVIN SIGN look-alike of a member's, and binds nothing", async () => {
    const page = await lookalikeSignsIn();
    expect(await page.textContent("h1")).toBe("Not a member");
    expect(await identities()).toEqual([]);
    const [refusal] = await db.owner.client`
      select outcome, reason from audit_events
      where organization_id = ${organizationId} and tool = 'sign_in' order by occurred_at desc limit 1`;
    expect(refusal).toEqual({ outcome: "refused", reason: "not_member" });
  });

  it("still signs the ASCII member in after the look-alike tried, bound to her own identity", async () => {
    await lookalikeSignsIn();
    const client = new TestOAuthClient(await loopbackRedirectUri());
    const { result } = await connect(
      `${server.base}/mcp`,
      client,
      await newPage(),
      async (page) => {
        await throughIdp(page, "kate@kanzlei.example", "idp-kate");
        await decide(page, "allow");
      },
    );
    expect(result).toBe("AUTHORIZED");
    expect(await identities()).toEqual([{ subject: "idp-kate", user_id: kate.userId }]);
  });

  it("finds no organisation's IdP for a look-alike of its domain", async () => {
    const response = await fetch(`${server.base}/sign-in/email`, {
      method: "POST",
      body: new URLSearchParams({ email: `kate@${KELVIN}anzlei.example`, continue: "x=1" }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("set-cookie") ?? "").not.toContain("north_sign_in");
    expect(await response.text()).not.toContain(idp.issuer);
  });

  it("does not reinstate a removed member when the operator adds a look-alike of her email", async () => {
    const kim = await addMember(db.owner.db, { organizationId, email: "kim@kanzlei.example" });
    await removeMember(db.owner.db, { organizationId, userId: kim.userId });
    const added = addMember(db.owner.db, { organizationId, email: `${KELVIN}im@kanzlei.example` });
    // The members index on lower(email) is stricter than the comparison: the look-alike is
    // refused as a duplicate rather than reinstating Kim.
    await expect(added).rejects.toMatchObject({ cause: { code: "23505" } });
    const [row] = await db.owner.client`
      select removed_at is not null as removed from members where user_id = ${kim.userId}`;
    expect(row).toEqual({ removed: true });
  });

  it("normalises emails the same way in TypeScript and in SQL", async () => {
    const inputs = [
      `${KELVIN}ate@kanzlei.example`,
      "kate@kanzlei.example",
      "KATE@Kanzlei.Example",
      " \t Kate@kanzlei.example\r\n",
      "\u00a0kate@kanzlei.example\u00a0",
      "\u0130nci@kanzlei.example",
      "Stra\u00dfe@kanzlei.example",
      "STRASSE@kanzlei.example",
      "\uff2b\uff41\uff54\uff45@kanzlei.example",
      "e\u0301lise@kanzlei.example",
      "\u00e9lise@kanzlei.example",
      "\u00c9LISE@kanzlei.example",
      "\u017fam@kanzlei.example",
      "\u03a3\u03c3\u03c2@kanzlei.example",
      "\ufb01le@kanzlei.example",
      "",
    ];
    const rows = await db.app.client.unsafe<{ n: string }[]>(
      `select ${normalizedEmailSql("t.e")} as n
       from unnest($1::text[]) with ordinality as t(e, i) order by t.i`,
      [inputs],
    );
    expect(rows.map((row) => row.n)).toEqual(inputs.map(normalizeEmail));
    // What the normalisation promises, beyond the two halves agreeing.
    expect(normalizeEmail(`${KELVIN}ate@kanzlei.example`)).not.toBe("kate@kanzlei.example");
    expect(normalizeEmail(" KATE@Kanzlei.Example\n")).toBe("kate@kanzlei.example");
    // No Unicode folding at all: another composition of "é", or a capital É, is another address.
    expect(normalizeEmail("e\u0301lise@x.example")).not.toBe(
      normalizeEmail("\u00e9lise@x.example"),
    );
    expect(normalizeEmail("\u00c9lise@x.example")).not.toBe(normalizeEmail("\u00e9lise@x.example"));
  });

  it("keeps sign_in_member to the transaction's organisation: without a tenant it refuses", async () => {
    const call = db.app
      .client`select * from public.sign_in_member('i', 's', 'kate@kanzlei.example')`;
    await expect(call).rejects.toMatchObject({ code: "42501" });
    const [{ n } = { n: -1 }] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from member_identities where subject = 's'`;
    expect(n).toBe(0);
  });
});
