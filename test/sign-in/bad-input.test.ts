import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace } from "../support/fixtures.ts";
import { type SignInServer, startSignInServer } from "../support/sign-in.ts";

let db: TestDatabase;
let server: SignInServer;
let clientId: string;
const redirectUri = "http://127.0.0.1:37000/callback";
/** MCP Inspector's page, which runs its OAuth flow in the browser. */
const INSPECTOR = "http://localhost:6274";

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db, { allowedOrigins: [INSPECTOR] });
  await createWorkspace(db.owner.db);
  const registered = await fetch(`${server.base}/oauth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Bad input",
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
    }),
  });
  clientId = String(((await registered.json()) as { client_id: string }).client_id);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});
const json = (body: unknown) => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/** Each request, as a hostile or careless client could send it: [label, path, init]. */
const cases = (): Array<[string, string, RequestInit]> => [
  ["authorize without parameters", "/oauth/oauth2/authorize", {}],
  ["authorize with only a client", `/oauth/oauth2/authorize?client_id=${clientId}`, {}],
  [
    "authorize with a javascript: redirect",
    `/oauth/oauth2/authorize?response_type=code&client_id=${clientId}&redirect_uri=javascript:alert(1)&code_challenge=abc&code_challenge_method=S256&resource=${encodeURIComponent(`${server.base}/mcp`)}`,
    {},
  ],
  [
    "authorize with a huge scope",
    `/oauth/oauth2/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(redirectUri)}&scope=${"x".repeat(4000)}&code_challenge=abc&code_challenge_method=S256&resource=${encodeURIComponent(`${server.base}/mcp`)}`,
    {},
  ],
  [
    "authorize with two resources",
    `/oauth/oauth2/authorize?response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(redirectUri)}&code_challenge=abc&code_challenge_method=S256&resource=${encodeURIComponent(`${server.base}/mcp`)}&resource=https://x.example/`,
    {},
  ],
  ["token with an empty body", "/oauth/oauth2/token", form({})],
  ["token with JSON", "/oauth/oauth2/token", json({ grant_type: "authorization_code" })],
  [
    "token with the password grant",
    "/oauth/oauth2/token",
    form({ grant_type: "password", username: "a", password: "b", client_id: clientId }),
  ],
  [
    "token with a junk code",
    "/oauth/oauth2/token",
    form({
      grant_type: "authorization_code",
      code: "junk",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_verifier: "v".repeat(43),
    }),
  ],
  [
    "token with a junk refresh token",
    "/oauth/oauth2/token",
    form({ grant_type: "refresh_token", refresh_token: "junk", client_id: clientId }),
  ],
  ["register with non-JSON", "/oauth/oauth2/register", json("{not json")],
  ["register with an array", "/oauth/oauth2/register", json([1, 2])],
  [
    "register with redirect_uris as a string",
    "/oauth/oauth2/register",
    json({ redirect_uris: "http://127.0.0.1/cb" }),
  ],
  [
    "register with a javascript: redirect",
    "/oauth/oauth2/register",
    json({ redirect_uris: ["javascript:alert(1)"], token_endpoint_auth_method: "none" }),
  ],
  [
    "register with a data: redirect",
    "/oauth/oauth2/register",
    json({ redirect_uris: ["data:text/html,x"], token_endpoint_auth_method: "none" }),
  ],
  ["revoke with an empty body", "/oauth/oauth2/revoke", form({})],
  ["revoke a junk token", "/oauth/oauth2/revoke", form({ token: "junk", client_id: clientId })],
  ["sign-in with a junk query", "/sign-in?%ZZ=1&sig=x", {}],
  ["email form without an email", "/sign-in/email", form({})],
  [
    "email form with a huge email",
    "/sign-in/email",
    form({ email: `${"a".repeat(5000)}@x.example` }),
  ],
  ["token form with garbage", "/sign-in/token", form({ token: "north_garbage", continue: "%%%" })],
  ["callback without a login cookie", "/sign-in/callback?code=x&state=y", {}],
  [
    "callback with a forged cookie",
    "/sign-in/callback?code=x&state=y",
    { headers: { Cookie: "north_sign_in=abcdef" } },
  ],
  [
    "consent without a session",
    "/sign-in/consent",
    form({ decision: "allow", continue: "client_id=x", csrf: "y" }),
  ],
  ["consent page without a session", `/sign-in/consent?client_id=${clientId}&scope=admin`, {}],
];

describe("bad input gets an error, never a 500 and never a redirect elsewhere", () => {
  it("answers every malformed request with a 4xx (or a page), not a server error", async () => {
    for (const [label, path, init] of cases()) {
      const response = await fetch(`${server.base}${path}`, { ...init, redirect: "manual" });
      const body = await response.text();
      expect(response.status, `${label}: ${body.slice(0, 200)}`).toBeLessThan(500);
      const location = response.headers.get("location") ?? "";
      expect(location, label).not.toMatch(/^javascript:|^data:/i);
      if (location.startsWith("http")) {
        expect(new URL(location).origin, label).toBe(server.base);
      }
    }
    expect(server.logs.join("")).not.toContain('"level":50');
  });

  it.each([
    ["POST", "/oauth/north/establish-session"],
    ["POST", "/oauth/oauth2/consent"],
    ["POST", "/oauth/oauth2/introspect"],
    ["POST", "/oauth/sign-up/email"],
    ["GET", "/oauth/get-session"],
    ["POST", "/oauth/oauth2/continue"],
  ])("does not route the library's %s %s from outside", async (method, path) => {
    const response = await fetch(`${server.base}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body:
        method === "POST"
          ? JSON.stringify({ userId: "00000000-0000-0000-0000-000000000000" })
          : undefined,
    });
    expect(response.status).toBe(404);
    expect(response.headers.getSetCookie()).toEqual([]);
  });
});

describe("browser-based hosts", () => {
  it("lets an allowed origin read the metadata, register and call the token endpoint (CORS)", async () => {
    const preflight = await fetch(`${server.base}/oauth/oauth2/token`, {
      method: "OPTIONS",
      headers: {
        Origin: INSPECTOR,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(INSPECTOR);
    const metadata = await fetch(`${server.base}/.well-known/oauth-authorization-server`, {
      headers: { Origin: INSPECTOR },
    });
    expect(metadata.headers.get("access-control-allow-origin")).toBe(INSPECTOR);
    const registered = await fetch(`${server.base}/oauth/oauth2/register`, {
      method: "POST",
      headers: { Origin: INSPECTOR, "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: "MCP Inspector",
        redirect_uris: [`${INSPECTOR}/oauth/callback`],
        token_endpoint_auth_method: "none",
      }),
    });
    expect(registered.status).toBe(201);
    expect(registered.headers.get("access-control-allow-origin")).toBe(INSPECTOR);
  });

  it("refuses any other origin", async () => {
    const response = await fetch(`${server.base}/.well-known/oauth-authorization-server`, {
      headers: { Origin: "http://localhost:9999" },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});
