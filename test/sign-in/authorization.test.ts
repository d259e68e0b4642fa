import { authorizationServerTables as ast, createApiToken, removeMember } from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import { eq, sql } from "drizzle-orm";
import { decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, SignJWT } from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import { connectMcpClient } from "../support/mcp-client.ts";
import { northJson } from "../support/processes.ts";
import {
  connect,
  decide,
  loopbackRedirectUri,
  type SignInServer,
  signInWithToken,
  startSignInServer,
  TEST_SECRET_KEY,
  TestOAuthClient,
} from "../support/sign-in.ts";
import { saveAnswer } from "../support/tools.ts";

let db: TestDatabase;
let server: SignInServer;
let browser: Browser;
let ws: Workspace;
let memberToken: string;
let managerToken: string;
let serverUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  browser = await launchChromium();
  ws = await createWorkspace(db.owner.db);
  const scopes = ["profile:write", "memory:read", "memory:write"];
  memberToken = (await createApiToken(db.owner.db, { ...ws.member, scopes, expiresAt: null }))
    .token;
  managerToken = (
    await createApiToken(db.owner.db, {
      ...ws.manager,
      scopes: [...scopes, "admin"],
      expiresAt: null,
    })
  ).token;
  serverUrl = `${server.base}/mcp`;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.drop();
});

/** Everything a client can ask for (hosts ask for the member scopes the metadata lists). */
const ALL_SCOPES = "profile:write memory:read memory:write admin";

const newPage = async (): Promise<Page> => (await browser.newContext()).newPage();

/** A JSON-RPC tools/list with a bearer token: the status says whether the token still holds. */
async function listStatus(token: string): Promise<number> {
  const response = await fetch(serverUrl, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body?.cancel();
  return response.status;
}

/** A member connected through DCR and the token sign-in, consent approved. */
async function connected(token: string, scope?: string) {
  const client = new TestOAuthClient(await loopbackRedirectUri());
  client.scope = scope;
  const page = await newPage();
  let consentText = "";
  const { result } = await connect(serverUrl, client, page, async (p) => {
    await signInWithToken(p, token);
    await p.waitForSelector('button[value="deny"]');
    consentText = (await p.textContent("main")) ?? "";
    await decide(p, "allow");
  });
  expect(result).toBe("AUTHORIZED");
  const tokens = client.tokens();
  if (!tokens) throw new Error("no tokens");
  return { client, tokens, consentText, page };
}

describe("a connector signs in (DCR, API-token sign-in, consent)", () => {
  it("lists and calls tools with the access token it got", async () => {
    const { client, tokens, consentText } = await connected(memberToken);
    expect(consentText).toContain("North test client");
    expect(consentText).toContain("Save new memories to your workspace");
    const claims = decodeJwt(tokens.access_token);
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe("at+jwt");
    expect(claims.sub).toBe(ws.member.userId);
    expect(claims.aud).toBe(serverUrl);
    expect(claims.north_org).toBe(ws.organizationId);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBeLessThanOrEqual(3600);
    expect(tokens.refresh_token).toBeTruthy();

    const mcp = await connectMcpClient(serverUrl, { authProvider: client, name: "connector" });
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("north__working_profile_answer");
    const saved = await saveAnswer(mcp, {
      question: "Which practice area?",
      answer: "Employment law",
    });
    expect(saved.receipt.outcome).toBe("created");
    const read = await mcp.callTool({ name: "north__working_profile", arguments: {} });
    expect(JSON.stringify(read.structuredContent)).toContain("Employment law");
    await mcp.close();
  });

  it("rotates refresh tokens; a replay within the grace window gets the same answer", async () => {
    const { client, tokens } = await connected(memberToken);
    const refresh = (refreshToken: string) =>
      fetch(`${server.base}/oauth/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: refreshToken,
          client_id: client.clientInformation()?.client_id ?? "",
          resource: serverUrl,
        }),
      });
    const first = await refresh(tokens.refresh_token ?? "");
    expect(first.status).toBe(200);
    const rotated = (await first.json()) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(await listStatus(rotated.access_token)).toBe(200);

    const replay = await refresh(tokens.refresh_token ?? "");
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { refresh_token: string }).refresh_token).toBe(
      rotated.refresh_token,
    );

    // Past the grace window (moved into the past rather than waited for), a replay of the spent
    // token revokes the whole grant: the access token that still looks valid stops working.
    await db.owner.db
      .update(ast.oauthRefreshToken)
      .set({ rotationReplayExpiresAt: sql`now() - interval '1 second'` })
      .where(sql`${ast.oauthRefreshToken.rotatedAt} is not null`);
    const reuse = await refresh(tokens.refresh_token ?? "");
    expect(reuse.status).toBe(400);
    expect(await listStatus(rotated.access_token)).toBe(401);
    const newer = await refresh(rotated.refresh_token);
    expect(newer.status).toBe(400);
    const [audit] = await db.owner.client`
      select outcome, reason from audit_events where tool = 'refresh_reuse'`;
    expect(audit).toEqual({ outcome: "revoked", reason: "refresh_reuse" });
  });

  it("gives a member who asks for admin a token without it, and says so on the consent page", async () => {
    const { tokens, consentText } = await connected(memberToken, ALL_SCOPES);
    expect(consentText).not.toContain("Manager tools");
    const scopes = String(decodeJwt(tokens.access_token).scope).split(" ");
    expect(scopes).not.toContain("admin");
    expect(scopes).toEqual(expect.arrayContaining(["profile:write", "memory:read"]));
  });

  it("caps a grant by the API token the member signed in with", async () => {
    const readOnly = (
      await createApiToken(db.owner.db, { ...ws.member, scopes: ["memory:read"], expiresAt: null })
    ).token;
    const { tokens, consentText } = await connected(readOnly);
    expect(consentText).not.toContain("Save new memories");
    const scopes = String(decodeJwt(tokens.access_token).scope).split(" ");
    expect(scopes).toContain("memory:read");
    expect(scopes).not.toContain("memory:write");
    expect(scopes).not.toContain("profile:write");
  });

  it("gives a manager admin when asked", async () => {
    const { tokens, consentText } = await connected(managerToken, ALL_SCOPES);
    expect(consentText).toContain("Manager tools");
    expect(String(decodeJwt(tokens.access_token).scope).split(" ")).toContain("admin");
  });

  it("remembers consent per member and client: a second authorization skips the page", async () => {
    const { client, page: first } = await connected(memberToken);
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    const page = await first.context().newPage();
    // A fresh authorization by the same client, in the same browser (its session still open).
    const next = new TestOAuthClient(client.redirectUri);
    next.saveClientInformation(client.clientInformation() as never);
    expect(await auth(next, { serverUrl })).toBe("REDIRECT");
    let sawConsent = false;
    page.on("framenavigated", (frame) => {
      if (frame.url().includes("/sign-in/consent")) sawConsent = true;
    });
    const { authorizeInBrowser } = await import("../support/sign-in.ts");
    const landed = await authorizeInBrowser(
      page,
      next.authorizationUrl as URL,
      next.redirectUri,
      async () => {},
    );
    expect(landed.searchParams.get("code")).toBeTruthy();
    expect(sawConsent).toBe(false);
  });

  it("a denied consent sends the client access_denied and grants nothing", async () => {
    const client = new TestOAuthClient(await loopbackRedirectUri());
    const { landed, result } = await connect(serverUrl, client, await newPage(), async (p) => {
      await signInWithToken(p, memberToken);
      await decide(p, "deny");
    });
    expect(result).toBeNull();
    expect(landed.searchParams.get("error")).toBe("access_denied");
    const consents = await db.owner.db
      .select()
      .from(ast.oauthConsent)
      .where(eq(ast.oauthConsent.clientId, client.clientInformation()?.client_id ?? ""));
    expect(consents).toEqual([]);
  });
});

describe("the resource server checks every request", () => {
  it("revoking the grant with the CLI ends access on the next call", async () => {
    const { client, tokens } = await connected(memberToken);
    expect(await listStatus(tokens.access_token)).toBe(200);
    const [grant] = await db.owner.db
      .select({ id: ast.oauthConsent.id })
      .from(ast.oauthConsent)
      .innerJoin(ast.oauthClient, eq(ast.oauthClient.clientId, ast.oauthConsent.clientId))
      .where(sql`${ast.oauthClient.redirectUris} @> array[${client.redirectUri}]::text[]`);
    // The operator's command, as a real process.
    const revoked = await northJson(["grant", "revoke", grant?.id ?? ""], {
      DATABASE_URL: db.ownerUrl,
      NORTH_AUDIT_KEY: TEST_AUDIT_KEY,
    });
    expect(revoked).toEqual({ id: grant?.id, revoked: true });
    expect(await listStatus(tokens.access_token)).toBe(401);
  });

  it("a client that revokes its refresh token (RFC 7009) ends its grant", async () => {
    const { client, tokens } = await connected(memberToken);
    expect(await listStatus(tokens.access_token)).toBe(200);
    const response = await fetch(`${server.base}/oauth/oauth2/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: tokens.refresh_token ?? "",
        token_type_hint: "refresh_token",
        client_id: client.clientInformation()?.client_id ?? "",
      }),
    });
    expect(response.status).toBe(200);
    expect(await listStatus(tokens.access_token)).toBe(401);
    const [audit] = await db.owner.client`
      select outcome, reason from audit_events where tool = 'grant_revoke' and reason = 'client'`;
    expect(audit).toEqual({ outcome: "revoked", reason: "client" });
  });

  it("removing the member ends access on the next call", async () => {
    const other = await createWorkspace(db.owner.db, "Removal");
    const token = (
      await createApiToken(db.owner.db, {
        ...other.member,
        scopes: ["memory:read"],
        expiresAt: null,
      })
    ).token;
    const { tokens } = await connected(token);
    expect(await listStatus(tokens.access_token)).toBe(200);
    await removeMember(db.owner.db, other.member);
    expect(await listStatus(tokens.access_token)).toBe(401);
  });

  it("refuses a token without exp, for another audience, or signed by another key", async () => {
    const { tokens } = await connected(memberToken);
    const claims = decodeJwt(tokens.access_token);
    const header = decodeProtectedHeader(tokens.access_token);
    // Signed with the authorization server's own key, read back from its table as the
    // library stores it (encrypted with NORTH_SECRET_KEY).
    const [row] = await db.owner.db
      .select()
      .from(ast.jwks)
      .where(eq(ast.jwks.id, header.kid ?? ""));
    const asKey = await importJWK(
      JSON.parse(await createSecretBox(TEST_SECRET_KEY).decrypt(JSON.parse(row?.privateKey ?? ""))),
      "ES256",
    );
    const sign = (payload: Record<string, unknown>) =>
      new SignJWT(payload)
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: header.kid })
        .sign(asKey);
    const { exp: _exp, ...noExp } = claims;
    const forged = [
      await sign(noExp),
      await sign({ ...claims, aud: "https://elsewhere.example/mcp" }),
      await sign({ ...claims }),
    ];
    expect(decodeJwt(forged[0] ?? "").exp).toBeUndefined();
    expect(decodeJwt(forged[1] ?? "").aud).toBe("https://elsewhere.example/mcp");
    // The control: the same claims with the same key do hold.
    expect(await listStatus(forged.pop() ?? "")).toBe(200);
    const { privateKey } = await generateKeyPair("ES256");
    forged.push(
      await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: header.kid })
        .sign(privateKey),
    );
    for (const token of forged) expect(await listStatus(token)).toBe(401);
    expect(await listStatus(tokens.access_token)).toBe(200);
  });
});
