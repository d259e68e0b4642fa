/**
 * Issue 21, point 5: the consent page names who receives the grant. A client registered through
 * DCR says whatever it likes about itself; the page must name where the browser will take the
 * code (the redirect's host), label such a client unverified, and never let its self-declared
 * name or `client_uri` borrow another site's name.
 */
import { createHash, randomBytes } from "node:crypto";
import { createApiToken } from "@north/db";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import {
  CIMD_HOST,
  type CimdHost,
  loopbackRedirectUri,
  type SignInServer,
  signInWithToken,
  startCimdHost,
  startSignInServer,
} from "../support/sign-in.ts";

let db: TestDatabase;
let server: SignInServer;
let cimd: CimdHost;
let browser: Browser;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  cimd = await startCimdHost();
  server = await startSignInServer(db, { cimd });
  browser = await launchChromium();
  const ws = await createWorkspace(db.owner.db);
  token = (
    await createApiToken(db.owner.db, { ...ws.member, scopes: ["memory:read"], expiresAt: null })
  ).token;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cimd?.close();
  await db?.drop();
});

async function register(metadata: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${server.base}/oauth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token_endpoint_auth_method: "none", ...metadata }),
  });
  const body = (await response.json()) as { client_id?: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return String(body.client_id);
}

/** Signs in with the API token and returns the consent page's text, without deciding. */
async function consentText(clientId: string, redirectUri: string): Promise<string> {
  const challenge = createHash("sha256")
    .update(randomBytes(32).toString("base64url"))
    .digest("base64url");
  const url = new URL(`${server.base}/oauth/oauth2/authorize`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: "memory:read",
    state: "st",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${server.base}/mcp`,
  }).toString();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url.toString());
    await signInWithToken(page, token);
    await page.waitForSelector('button[value="deny"]');
    return (await page.textContent("main")) ?? "";
  } finally {
    await context.close();
  }
}

describe("the consent page names who receives the grant", () => {
  it("names the redirect's host, labels a registered client unverified and drops the site it claims", async () => {
    const clientId = await register({
      client_name: "Claude (https://claude.ai)",
      client_uri: "https://claude.ai",
      redirect_uris: ["https://evil.example/oauth/callback"],
    });
    const text = await consentText(clientId, "https://evil.example/oauth/callback");
    expect(text).toContain("evil.example");
    expect(text).toMatch(/unverified/i);
    expect(text).toContain("Claude");
    expect(text).not.toContain("claude.ai");
  });

  it("shows a registered client's own web address when it shares the redirect's origin", async () => {
    const clientId = await register({
      client_name: "Matter Desk",
      client_uri: "https://desk.example/about",
      redirect_uris: ["https://desk.example/oauth/callback"],
    });
    const text = await consentText(clientId, "https://desk.example/oauth/callback");
    expect(text).toContain("https://desk.example/about");
    expect(text).toMatch(/unverified/i);
  });

  it("names a metadata-document client's document host and says a loopback app runs on this computer", async () => {
    const redirectUri = await loopbackRedirectUri();
    const clientId = cimd.serve("consent-names", {});
    cimd.serve("consent-names", {
      client_id: clientId,
      client_name: "Desk helper",
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    const text = await consentText(clientId, redirectUri);
    expect(text).toContain(CIMD_HOST);
    expect(text).toMatch(/on this computer/i);
    expect(text).not.toMatch(/unverified/i);
  });
});
