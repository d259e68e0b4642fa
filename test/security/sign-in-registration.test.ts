/**
 * Issue 21, point 6: registration cannot fill the database. Dynamic Client Registration and
 * Client ID Metadata Document resolution are unauthenticated, so each is budgeted per source
 * address (the connection's, here 127.0.0.x: Linux routes all of 127/8 to loopback), every stored
 * field and the number of redirect URIs are capped, and a client nobody ever consented to is
 * deleted after a day.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import {
  authorizationServerTables as ast,
  createApiToken,
  ensureAuthorizationServerUser,
} from "@north/db";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import {
  type CimdHost,
  loopbackRedirectUri,
  type SignInServer,
  startCimdHost,
  startSignInServer,
} from "../support/sign-in.ts";

const REGISTRATIONS = 4;
const RESOLUTIONS = 2;

let db: TestDatabase;
let server: SignInServer;
let cimd: CimdHost;
let ws: Workspace;

beforeAll(async () => {
  db = await createTestDatabase();
  cimd = await startCimdHost();
  server = await startSignInServer(db, {
    cimd,
    registrationLimits: {
      registrationsPerAddress: REGISTRATIONS,
      resolutionsPerAddress: RESOLUTIONS,
      windowSeconds: 3600,
    },
  });
  ws = await createWorkspace(db.owner.db);
  await createApiToken(db.owner.db, { ...ws.member, scopes: ["memory:read"], expiresAt: null });
});
afterAll(async () => {
  await server?.close();
  await cimd?.close();
  await db?.drop();
});

/** A source address no other check has used: each check spends its own budgets. */
let lastOctet = 10;
const freshAddress = () => `127.0.0.${lastOctet++}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One HTTP request to North from `from` (the connection's source address). */
function send(
  from: string,
  method: "GET" | "POST",
  path: string,
  body?: Record<string, unknown>,
): Promise<Answer> {
  const url = new URL(path, server.base);
  const payload = body ? JSON.stringify(body) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        localAddress: from,
        headers: payload ? { "content-type": "application/json" } : {},
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const client = (overrides: Record<string, unknown> = {}) => ({
  client_name: "Burst client",
  redirect_uris: ["https://app.example/callback"],
  token_endpoint_auth_method: "none",
  ...overrides,
});

const register = (from: string, metadata: Record<string, unknown> = client()) =>
  send(from, "POST", "/oauth/oauth2/register", metadata);

const clientIdOf = (answer: Answer) =>
  String((JSON.parse(answer.text) as { client_id?: string }).client_id);

/** Serves a metadata document under `name`; returns its URL, the client id. */
function metadataDocument(name: string, redirectUri: string) {
  const clientId = cimd.serve(name, {});
  cimd.serve(name, {
    client_id: clientId,
    client_name: name,
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  });
  return clientId;
}

/** An authorization request, as a browser that is not signed in sends it. */
const authorize = (from: string, clientId: string, redirectUri: string) =>
  send(
    from,
    "GET",
    `/oauth/oauth2/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: "memory:read",
      state: "st",
      code_challenge: "x".repeat(43),
      code_challenge_method: "S256",
      resource: `${server.base}/mcp`,
    })}`,
  );

describe("registration is budgeted per source address", () => {
  it("refuses a burst of registrations from one address past its budget, while another address still registers", async () => {
    const attacker = freshAddress();
    const secret = `marker-${randomUUID()}`;
    for (let i = 0; i < REGISTRATIONS; i++) {
      expect((await register(attacker)).status).toBe(201);
    }
    const refused = await register(attacker, client({ client_name: secret }));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(JSON.parse(refused.text)).toMatchObject({
      error: expect.any(String),
      error_description: expect.any(String),
    });
    expect((await register(freshAddress())).status).toBe(201);
    expect(server.logs.join("\n")).toContain("registration_rate_limited");
    expect(server.logs.join("\n")).not.toContain(secret);
  });

  it("refuses metadata-document resolutions from one address past its budget, while another address still resolves", async () => {
    const redirectUri = await loopbackRedirectUri();
    const document = (name: string) => metadataDocument(name, redirectUri);
    const attacker = freshAddress();
    for (let i = 0; i < RESOLUTIONS; i++) {
      expect((await authorize(attacker, document(`resolve-${i}`), redirectUri)).status).not.toBe(
        429,
      );
    }
    const refused = await authorize(attacker, document("resolve-over"), redirectUri);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.text).not.toMatch(/^\s*\{/);
    expect(cimd.requests).not.toContain("/resolve-over.json");
    const [stored] = await db.owner.db
      .select({ id: ast.oauthClient.id })
      .from(ast.oauthClient)
      .where(eq(ast.oauthClient.clientId, document("resolve-over")));
    expect(stored).toBeUndefined();
    expect(
      (await authorize(freshAddress(), document("resolve-other"), redirectUri)).status,
    ).not.toBe(429);
    expect(cimd.requests).toContain("/resolve-other.json");
  });
});

describe("registered metadata is capped", () => {
  it.each([
    ["client_name", { client_name: "n".repeat(201) }],
    ["client_uri", { client_uri: `https://app.example/${"a".repeat(1100)}` }],
    ["logo_uri", { logo_uri: `https://app.example/${"a".repeat(1100)}` }],
    ["tos_uri", { tos_uri: `https://app.example/${"a".repeat(1100)}` }],
    ["policy_uri", { policy_uri: `https://app.example/${"a".repeat(1100)}` }],
    ["contacts", { contacts: Array.from({ length: 6 }, (_, i) => `c${i}@app.example`) }],
    ["software_id", { software_id: "s".repeat(300) }],
    ["software_version", { software_version: "1".repeat(100) }],
  ])("refuses an oversized %s with invalid_client_metadata naming it", async (field, overrides) => {
    const answer = await register(freshAddress(), client(overrides));
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.text) as { error: string; error_description: string };
    expect(body.error).toBe("invalid_client_metadata");
    expect(body.error_description).toContain(field);
  });

  it("refuses more than ten redirect URIs, or an oversized one, with invalid_redirect_uri", async () => {
    const many = Array.from({ length: 11 }, (_, i) => `https://app.example/cb/${i}`);
    const long = [`https://app.example/${"a".repeat(1100)}`];
    for (const redirect_uris of [many, long]) {
      const answer = await register(freshAddress(), client({ redirect_uris }));
      expect(answer.status).toBe(400);
      const body = JSON.parse(answer.text) as { error: string; error_description: string };
      expect(body.error).toBe("invalid_redirect_uri");
      expect(body.error_description).toContain("redirect_uris");
    }
    const ten = Array.from({ length: 10 }, (_, i) => `https://app.example/cb/${i}`);
    expect((await register(freshAddress(), client({ redirect_uris: ten }))).status).toBe(201);
  });
});

describe("clients nobody consented to are swept after a day", () => {
  const twoDaysAgo = () => new Date(Date.now() - 2 * 24 * 3600 * 1000);

  async function registered(name: string) {
    const answer = await register(freshAddress(), client({ client_name: name }));
    expect(answer.status).toBe(201);
    return clientIdOf(answer);
  }

  /** Makes clients two days old (after their consents exist: each registration sweeps). */
  const backdate = (clientIds: string[]) =>
    db.owner.db
      .update(ast.oauthClient)
      .set({ createdAt: twoDaysAgo() })
      .where(inArray(ast.oauthClient.clientId, clientIds));

  const stored = async (clientIds: string[]) =>
    (
      await db.owner.db
        .select({ clientId: ast.oauthClient.clientId })
        .from(ast.oauthClient)
        .where(inArray(ast.oauthClient.clientId, clientIds))
    ).map((row) => row.clientId);

  it("deletes a client that never received a consent once it is a day old", async () => {
    const abandoned = await registered("Abandoned");
    await backdate([abandoned]);
    await register(freshAddress());
    expect(await stored([abandoned])).toEqual([]);
  });

  it("deletes a day-old metadata-document client nobody consented to when another is looked up", async () => {
    const redirectUri = await loopbackRedirectUri();
    const abandoned = metadataDocument("abandoned-cimd", redirectUri);
    expect((await authorize(freshAddress(), abandoned, redirectUri)).status).not.toBe(429);
    expect(await stored([abandoned])).toEqual([abandoned]);
    await backdate([abandoned]);
    const next = metadataDocument("next-cimd", redirectUri);
    expect((await authorize(freshAddress(), next, redirectUri)).status).not.toBe(429);
    expect(await stored([abandoned, next])).toEqual([next]);
  });

  it("keeps a client that has a consent or a refresh token, and one younger than a day", async () => {
    const consented = await registered("Consented");
    const refreshed = await registered("Refreshed");
    const young = await registered("Young");
    await ensureAuthorizationServerUser(db.owner.db, ws.member.userId);
    await db.owner.db.insert(ast.oauthConsent).values({
      id: randomUUID(),
      clientId: consented,
      userId: ws.member.userId,
      scopes: ["memory:read"],
      createdAt: twoDaysAgo(),
      updatedAt: twoDaysAgo(),
    });
    await db.owner.db.insert(ast.oauthRefreshToken).values({
      id: randomUUID(),
      token: randomUUID(),
      clientId: refreshed,
      userId: ws.member.userId,
      scopes: ["memory:read"],
      createdAt: twoDaysAgo(),
    });
    await backdate([consented, refreshed]);
    await register(freshAddress());
    expect((await stored([consented, refreshed, young])).sort()).toEqual(
      [consented, refreshed, young].sort(),
    );
  });
});
