import { addMember, createApiToken, removeMember, setMemberRole } from "@north/db";
import { describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { connectMcpClient } from "../support/mcp-client.ts";
import { remember } from "../support/memory-tools.ts";
import {
  authorizationRequest,
  authorizeAndExchange,
  exchangeCode,
  principalOf,
  registerClient,
} from "../support/oauth-requests.ts";
import {
  authorizeInBrowser,
  decide,
  mcpStatus,
  refreshAt,
  signInWithToken,
  TestOAuthClient,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * A second independent review's attacks on the grant records (decision 029), each run against
 * the code before its fix and shown to succeed there: a refresh token or code of an earlier
 * grant replayed to end the member's current one, a demoted manager's connectors becoming admin
 * again on re-promotion, a step-up that can never succeed asked forever (and answering whether
 * colleagues wrote about a subject), and a control character in `client_id` reaching
 * PostgreSQL. (Two tabs allowing the same client at once could
 * end on a 500; the grant's consent row is now locked while it is replaced. That race is not
 * reproduced here: it hit one try in three.)
 */

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];
const WITH_ADMIN = [...MEMBER_SCOPES, "admin"].join(" ");

const { db, server, newPage } = useSignInSuite();

const tokenFor = async (member: Workspace["member"], scopes = MEMBER_SCOPES) =>
  (await createApiToken(db.owner.db, { ...member, scopes, expiresAt: null })).token;

/** One connection of `client`, signed in with `token` and allowed (a new grant each time). */
async function connection(
  client: { clientId: string; redirectUri: string },
  token: string,
  scope: string | null = null,
) {
  const { tokens } = await authorizeAndExchange(
    server,
    await newPage(),
    client,
    scope,
    async (p) => {
      await signInWithToken(p, token);
      await decide(p, "allow");
    },
  );
  if (!tokens?.refresh_token) throw new Error("no tokens");
  return { access: tokens.access_token, refresh: tokens.refresh_token };
}

/** A refresh as a host sends it, for a client registered by hand. */
const refresh = (client: { clientId: string }, refreshToken: string) => {
  const host = new TestOAuthClient("http://127.0.0.1:1/callback");
  host.saveClientInformation({ client_id: client.clientId } as never);
  return refreshAt(server.base, host, refreshToken);
};

describe("a token of an earlier grant cannot end the member's current one", () => {
  it("a refresh token the re-consent revoked, replayed, leaves the new grant alone", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await registerClient(server.base, "Claude Code");
    const old = await connection(client, await tokenFor(ws.member));
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // see the removal case below
    const current = await connection(client, await tokenFor(ws.member));
    expect(await mcpStatus(server.mcpUrl, old.access)).toBe(401);
    expect((await refresh(client, old.refresh)).status).toBe(400);
    expect(await mcpStatus(server.mcpUrl, current.access)).toBe(200);
    expect((await refresh(client, current.refresh)).status).toBe(200);
  });

  it("a refresh token from before the member's removal leaves their grant after reinstatement", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await registerClient(server.base, "Claude Code");
    const before = await connection(client, await tokenFor(ws.member));
    const [row] = await db.owner.client<{ email: string }[]>`
      select email from members where user_id = ${ws.member.userId}`;
    await removeMember(db.owner.db, ws.member);
    await addMember(db.owner.db, { organizationId: ws.organizationId, email: row?.email ?? "" });
    // The library keeps its tokens' times to the second: a reconnection within the second of the
    // old token's issue could not be told apart (decision 029). A person takes longer.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const after = await connection(client, await tokenFor(ws.member));
    expect((await refresh(client, before.refresh)).status).toBe(400);
    expect(await mcpStatus(server.mcpUrl, after.access)).toBe(200);
  });

  it("an authorization code of an earlier grant, replayed, leaves the new grant alone", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await registerClient(server.base, "Claude Code");
    const { url, verifier } = authorizationRequest(server.base, client, null);
    const landed = await authorizeInBrowser(await newPage(), url, client.redirectUri, async (p) => {
      await signInWithToken(p, await tokenFor(ws.member));
      await decide(p, "allow");
    });
    const code = landed.searchParams.get("code") ?? "";
    await exchangeCode(server.base, client, code, verifier);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // see the removal case
    const current = await connection(client, await tokenFor(ws.member));
    const replay = await fetch(`${server.base}/oauth/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        code_verifier: verifier,
        resource: server.mcpUrl,
      }),
    });
    expect(replay.status).toBe(400);
    expect(await mcpStatus(server.mcpUrl, current.access)).toBe(200);
  });
});

describe("demoting a manager", () => {
  it("ends their grants that hold admin, so a later promotion revives no admin connector", async () => {
    const ws = await createWorkspace(db.owner.db);
    const client = await registerClient(server.base, "Manager's laptop");
    const grant = await connection(
      client,
      await tokenFor(ws.manager, [...MEMBER_SCOPES, "admin"]),
      WITH_ADMIN,
    );
    // As if opened through the firm's IdP: no API token whose revocation would end it anyway.
    await db.owner.client`
      update north_auth.oauth_grant set method = 'idp', api_token_id = null, scope_cap = null
      where user_id = ${ws.manager.userId}`;
    expect((await principalOf(db, server, grant.access))?.scopes).toContain("admin");
    await setMemberRole(db.owner.db, { ...ws.manager, role: "member" });
    expect(await mcpStatus(server.mcpUrl, grant.access)).toBe(401);
    expect((await refresh(client, grant.refresh)).status).toBe(400);
    await setMemberRole(db.owner.db, { ...ws.manager, role: "manager" });
    expect(await mcpStatus(server.mcpUrl, grant.access)).toBe(401);
  });
});

describe("a step-up that cannot succeed is not asked", () => {
  it("a manager's grant opened by a token without admin forgets its own, without a 403 oracle", async () => {
    const ws = await createWorkspace(db.owner.db);
    const writer = await connectMcpClient(server.mcpUrl, {
      token: await tokenFor(ws.member),
      name: "colleague",
    });
    const written = await remember(writer, {
      kind: "observation",
      origin: "stated",
      body: "Under investigation, do not tell the client.",
      subject_type: "client",
      subject_id: "Acme SAS",
    });
    expect(written.isError, written.text).toBe(false);
    await writer.close();
    const client = await registerClient(server.base, "Manager's host");
    const { access } = await connection(client, await tokenFor(ws.manager), WITH_ADMIN);
    const forget = async (subjectId: string) => {
      const response = await fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${access}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "north__memory_forget",
            arguments: { subject_type: "client", subject_id: subjectId },
          },
        }),
      });
      return { status: response.status, body: await response.text() };
    };
    const colleagues = await forget("Acme SAS");
    const nobody = await forget("Nobody Ltd");
    expect(colleagues.status).toBe(200);
    expect(nobody.status).toBe(200);
    expect(colleagues.body).toContain('"remaining":1');
    const [left] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories
      where organization_id = ${ws.organizationId} and forgotten_at is null`;
    expect(left?.n).toBe(1);
  });
});

describe("the consent page under odd input", () => {
  it("a control character in client_id gets North's page at authorize and on the consent page", async () => {
    const ws = await createWorkspace(db.owner.db);
    const token = await tokenFor(ws.member);
    const client = await registerClient(server.base);
    const page = await newPage();
    await page.goto(authorizationRequest(server.base, client, null).url.toString());
    await signInWithToken(page, token);
    await page.waitForSelector('button[name="decision"][value="allow"]');
    const forged = authorizationRequest(server.base, { ...client, clientId: "a\u0000b" }, null);
    const authorize = await page.goto(forged.url.toString());
    expect(authorize?.status()).toBe(400);
    expect(authorize?.headers()["content-type"]).toContain("text/html");
    const consent = await page.goto(
      `${server.base}/sign-in/consent?client_id=a%00b&scope=memory%3Aread`,
    );
    expect(consent?.status()).toBe(400);
    expect(consent?.headers()["content-type"]).toContain("text/html");
  });
});
