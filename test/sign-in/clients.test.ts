import { createHash, randomBytes } from "node:crypto";
import { createServer as createNetServer, type Server } from "node:net";
import { authorizationServerTables as ast, createApiToken } from "@north/db";
import { sql } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { connectMcpClient } from "../support/mcp-client.ts";
import {
  authorizeInBrowser,
  type CimdHost,
  connect,
  decide,
  LOOPBACK_HOST,
  loopbackRedirectUri,
  PRIVATE_HOST,
  type SignInServer,
  signInWithToken,
  startCimdHost,
  startSignInServer,
  TestOAuthClient,
} from "../support/sign-in.ts";

let db: TestDatabase;
let server: SignInServer;
let cimd: CimdHost;
let browser: Browser;
let ws: Workspace;
let token: string;
let serverUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  cimd = await startCimdHost();
  server = await startSignInServer(db, { cimd });
  browser = await launchChromium();
  ws = await createWorkspace(db.owner.db);
  token = (
    await createApiToken(db.owner.db, {
      ...ws.member,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    })
  ).token;
  serverUrl = `${server.base}/mcp`;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cimd?.close();
  await db?.drop();
});

async function register(metadata: Record<string, unknown>) {
  const response = await fetch(`${server.base}/oauth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const pkce = () => {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

/** An authorization request as a host builds it; `overrides` set or (undefined) drop a field. */
function authorizeUrl(
  clientId: string,
  redirectUri: string,
  overrides: Record<string, string | undefined> = {},
) {
  const { challenge } = pkce();
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: "memory:read",
    state: "st",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: serverUrl,
    ...overrides,
  };
  const url = new URL(`${server.base}/oauth/oauth2/authorize`);
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(key, value);
  return url;
}

/**
 * GET without following: where does the authorization server send the browser? (The library
 * answers a non-browser fetch with `{ redirect: true, url }` instead of a 302; both count.)
 */
async function authorizeStatus(url: URL) {
  const response = await fetch(url, { redirect: "manual" });
  const text = await response.text();
  let location = response.headers.get("location");
  if (!location && response.status === 200) {
    const body = JSON.parse(text) as { redirect?: boolean; url?: string };
    if (body.redirect) location = body.url ?? null;
  }
  return { status: response.status, location, text };
}

describe("discovery", () => {
  it("publishes RFC 8414 metadata with S256 only, CIMD support and the four scopes", async () => {
    const response = await fetch(`${server.base}/.well-known/oauth-authorization-server`);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(server.base);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.scopes_supported).toEqual([
      "profile:write",
      "memory:read",
      "memory:write",
      "admin",
    ]);
    for (const endpoint of ["authorization", "token", "registration", "revocation"]) {
      expect(String(metadata[`${endpoint}_endpoint`])).toMatch(new RegExp(`^${server.base}/`));
    }
    expect(metadata.introspection_endpoint).toBeUndefined();
    const jwks = (await (await fetch(String(metadata.jwks_uri))).json()) as { keys: unknown[] };
    expect(Array.isArray(jwks.keys)).toBe(true);
    const resource = (await (
      await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({ resource: serverUrl, authorization_servers: [server.base] });
  });
});

describe("client registration", () => {
  it.each([
    ["Claude Code", "http://localhost:54321/callback"],
    ["MCP Inspector", "http://localhost:6274/oauth/callback"],
    ["claude.ai", "https://claude.ai/api/mcp/auth_callback"],
  ])("registers %s's redirect URI through DCR", async (name, uri) => {
    const { status, body } = await register({
      client_name: name,
      redirect_uris: [uri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    expect(status).toBe(201);
    expect(body.redirect_uris).toEqual([uri]);
    expect(body.client_secret).toBeUndefined();
  });

  it.each([
    ["Claude Code", "http://localhost:54321/callback"],
    ["MCP Inspector", "http://localhost:6274/oauth/callback"],
    ["claude.ai", "https://claude.ai/api/mcp/auth_callback"],
  ])("accepts %s as a Client ID Metadata Document", async (name, uri) => {
    const clientId = cimd.serve(`meta-${name.replace(/\W/g, "")}`, {});
    cimd.serve(`meta-${name.replace(/\W/g, "")}`, {
      client_id: clientId,
      client_name: name,
      redirect_uris: [uri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    const { location } = await authorizeStatus(authorizeUrl(clientId, uri));
    expect(location).toMatch(/^\/sign-in\?/);
  });

  it("refuses a plain-http redirect URI that is not loopback", async () => {
    const { status } = await register({
      client_name: "Bad",
      redirect_uris: ["http://evil.example/callback"],
      token_endpoint_auth_method: "none",
    });
    expect(status).toBe(400);
  });
});

describe("a CIMD client connects end to end", () => {
  it("signs in with its metadata URL as client id and calls tools", async () => {
    const uri = await loopbackRedirectUri();
    const clientId = cimd.serve("north-test-cimd", {});
    cimd.serve("north-test-cimd", {
      client_id: clientId,
      client_name: "CIMD test host",
      redirect_uris: [uri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    const client = new TestOAuthClient(uri, clientId, "CIMD test host");
    let consent = "";
    const { result } = await connect(
      serverUrl,
      client,
      await (await browser.newContext()).newPage(),
      async (page) => {
        await signInWithToken(page, token);
        await page.waitForSelector('button[value="allow"]');
        consent = (await page.textContent("main")) ?? "";
        await decide(page, "allow");
      },
    );
    expect(result).toBe("AUTHORIZED");
    expect(client.clientInformation()?.client_id).toBe(clientId);
    expect(consent).toContain("CIMD test host");
    expect(cimd.requests).toContain("/north-test-cimd.json");
    const mcp = await connectMcpClient(serverUrl, { authProvider: client, name: "cimd" });
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    await mcp.close();
  });

  it("refuses a metadata URL on a loopback or private address without connecting", async () => {
    let connections = 0;
    const sentinel: Server = createNetServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => sentinel.listen(0, "127.0.0.1", resolve));
    const sentinelPort = (sentinel.address() as { port: number }).port;
    try {
      for (const host of [LOOPBACK_HOST, PRIVATE_HOST, "127.0.0.1", "[::1]", "10.0.0.8"]) {
        const clientId = `https://${host}:${sentinelPort}/client.json`;
        const { status, location } = await authorizeStatus(
          authorizeUrl(clientId, await loopbackRedirectUri()),
        );
        expect(status, host).not.toBe(500);
        expect(location ?? "", host).not.toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback/);
        expect(location ?? "", host).not.toMatch(/^\/sign-in/);
      }
      expect(connections).toBe(0);
    } finally {
      sentinel.close();
    }
  });
});

describe("bad authorization requests", () => {
  let clientId: string;
  let uri: string;
  beforeAll(async () => {
    uri = await loopbackRedirectUri();
    const { body } = await register({
      client_name: "Negative cases",
      redirect_uris: [uri],
      token_endpoint_auth_method: "none",
    });
    clientId = String(body.client_id);
  });

  it("never redirects to an unknown client's or an unregistered redirect URI", async () => {
    for (const url of [
      authorizeUrl("no-such-client", uri),
      authorizeUrl(clientId, "http://127.0.0.1:1/elsewhere"),
      authorizeUrl(clientId, "https://attacker.example/callback"),
    ]) {
      const { status, location } = await authorizeStatus(url);
      expect(status).not.toBe(500);
      expect(location ?? "").not.toContain("127.0.0.1:1/elsewhere");
      expect(location ?? "").not.toContain("attacker.example");
      expect(location ?? "").not.toMatch(/^\/sign-in\?/);
    }
  });

  it.each([
    ["missing PKCE", { code_challenge: undefined, code_challenge_method: undefined }, "PKCE"],
    ["plain PKCE", { code_challenge_method: "plain" }, "PKCE"],
    ["a foreign resource", { resource: "https://elsewhere.example/mcp" }, "resource"],
    ["no resource", { resource: undefined }, "resource"],
  ])("refuses %s with a clear page", async (_name, overrides, words) => {
    const { status, location, text } = await authorizeStatus(
      authorizeUrl(clientId, uri, overrides),
    );
    expect(status).toBe(400);
    expect(location).toBeNull();
    expect(text).toContain(words);
  });

  it("accepts a code once, and not after it expired", async () => {
    const page = await (await browser.newContext()).newPage();
    const codeFor = async () => {
      const { verifier, challenge } = pkce();
      const landed = await authorizeInBrowser(
        page,
        authorizeUrl(clientId, uri, { code_challenge: challenge }),
        uri,
        async (p) => {
          if (p.url().includes("/sign-in?")) await signInWithToken(p, token);
          if ((await p.$('button[value="allow"]')) || p.url().includes("/sign-in")) {
            await p.waitForSelector('button[value="allow"]', { timeout: 5_000 }).catch(() => {});
            if (await p.$('button[value="allow"]')) await decide(p, "allow");
          }
        },
      );
      return { code: landed.searchParams.get("code") ?? "", verifier };
    };
    const exchange = (code: string, verifier: string) =>
      fetch(`${server.base}/oauth/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: uri,
          client_id: clientId,
          code_verifier: verifier,
          resource: serverUrl,
        }),
      });
    const first = await codeFor();
    expect((await exchange(first.code, first.verifier)).status).toBe(200);
    const replay = await exchange(first.code, first.verifier);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");

    const second = await codeFor();
    expect(second.code).toBeTruthy();
    await db.owner.db.update(ast.verification).set({ expiresAt: sql`now() - interval '1 minute'` });
    const expired = await exchange(second.code, second.verifier);
    expect(expired.status).toBe(400);

    const third = await codeFor();
    const wrongVerifier = await exchange(third.code, pkce().verifier);
    // The library answers 401 invalid_request here rather than 400 invalid_grant; either way,
    // no token.
    expect([400, 401]).toContain(wrongVerifier.status);
    expect(await wrongVerifier.json()).not.toHaveProperty("access_token");
  });
});
