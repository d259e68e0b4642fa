import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { createApiToken } from "@north/db";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { connectMcpClient } from "../support/mcp-client.ts";
import { forget, held, remember } from "../support/memory-tools.ts";
import {
  authorizeInBrowser,
  connect,
  decide,
  loopbackRedirectUri,
  signInWithToken,
  TestOAuthClient,
  useSignInSuite,
} from "../support/sign-in.ts";

/**
 * Issue 21, point 12: hosts do not get manager rights by default. Claude Code asks for every
 * scope the protected-resource metadata lists, so a manager's consent granted `admin` to the
 * host. The metadata and the 401 challenge now name the member scopes only, and a manager
 * reaches `admin` by step-up (MCP 2025-11-25): the one call that needs it — erasing what
 * colleagues wrote about a subject — answers 403 insufficient_scope before erasing anything,
 * and the host re-authorizes (decision 030).
 */

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];

const { db, server, newPage } = useSignInSuite();

/**
 * A host that keeps no refresh token. SDK 1.32.2 answers a 403 insufficient_scope by calling
 * `auth()`, which refreshes first when it holds a refresh token; a refresh cannot widen the
 * scope (RFC 6749 §6), so its retry meets the same 403 and it gives up (typescript-sdk#2255;
 * SEP-2350's refresh bypass fixes it in the SDK's next major). Without one, `auth()` starts the
 * new authorization at once, as the fixed SDK does.
 */
class StepUpHost extends TestOAuthClient {
  override saveTokens(tokens: OAuthTokens) {
    super.saveTokens({ ...tokens, refresh_token: undefined });
  }
}

/** A workspace whose member and manager each sign in with a token carrying their full role. */
async function workspace() {
  const ws = await createWorkspace(db.owner.db);
  const token = async (who: Workspace["member"], scopes: string[]) =>
    (await createApiToken(db.owner.db, { ...who, scopes, expiresAt: null })).token;
  return {
    ws,
    memberToken: await token(ws.member, MEMBER_SCOPES),
    managerToken: await token(ws.manager, [...MEMBER_SCOPES, "admin"]),
  };
}

/** An MCP client on an API token, to write the memories the hosts then try to erase. */
function apiClient(token: string): Promise<Client> {
  return connectMcpClient(server.mcpUrl, { token, name: "writer" });
}

const SUBJECT = { subject_type: "client", subject_id: "Acme SAS" };
const observation = (body: string) =>
  ({ kind: "observation", origin: "stated", body, ...SUBJECT }) as const;

/**
 * A host connected the way Claude Code connects (the SDK's `auth()` with no scope of its own,
 * so the protected-resource metadata decides), signed in with `token`, consent approved; and its
 * MCP client on the SDK's transport, which records the status and challenge of every MCP call.
 * Always SDK v1's client, on purpose, whatever `NORTH_TEST_MCP_CLIENT` says: what is checked is
 * how SDK 1.32.2's step-up meets North (the refresh-first `auth()` of typescript-sdk#2255, which
 * {@link StepUpHost} works around); the v2 client's step-up (SEP-2350) is another flow.
 */
async function host(token: string) {
  const provider = new StepUpHost(await loopbackRedirectUri());
  const page = await newPage();
  const { result } = await connect(server.mcpUrl, provider, page, async (p) => {
    await signInWithToken(p, token);
    await decide(p, "allow");
  });
  expect(result).toBe("AUTHORIZED");
  const seen: { status: number; challenge: string | null }[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
    authProvider: provider,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      // The SDK's discovery during a step-up goes through here too, and after connecting the
      // client opens its GET event stream (405 here) whenever it gets to it: only the MCP
      // calls, POSTs to /mcp, count, or a late GET's 405 could be the last status seen.
      if (String(url) === server.mcpUrl && init?.method === "POST") {
        seen.push({ status: response.status, challenge: response.headers.get("www-authenticate") });
      }
      return response;
    },
  });
  const mcp = new Client({ name: "host", version: "1" });
  await mcp.connect(transport);
  const scopes = () => String(decodeJwt(provider.tokens()?.access_token ?? "").scope).split(" ");
  return { provider, page, transport, mcp, seen, scopes };
}

describe("hosts get member scopes; a manager steps up to admin", () => {
  it("names only the member scopes in the protected-resource metadata and the 401 challenge", async () => {
    for (const path of ["", "/mcp"]) {
      const response = await fetch(`${server.base}/.well-known/oauth-protected-resource${path}`);
      expect(((await response.json()) as { scopes_supported: string[] }).scopes_supported).toEqual(
        MEMBER_SCOPES,
      );
    }
    const response = await fetch(server.mcpUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain(`scope="${MEMBER_SCOPES.join(" ")}"`);
    expect(challenge).toContain(
      `resource_metadata="${server.base}/.well-known/oauth-protected-resource"`,
    );
    // The authorization server still lists every scope it can grant (SPEC §3a).
    const as = (await (
      await fetch(`${server.base}/.well-known/oauth-authorization-server`)
    ).json()) as { scopes_supported: string[] };
    expect(as.scopes_supported).toEqual([...MEMBER_SCOPES, "admin"]);
  });

  it("gives a manager's first connection a token without admin", async () => {
    const { managerToken } = await workspace();
    const manager = await host(managerToken);
    expect(manager.scopes()).not.toContain("admin");
    expect(manager.scopes()).toEqual(expect.arrayContaining(MEMBER_SCOPES));
    await manager.mcp.close();
  });

  it("steps a manager up when colleagues' memories would remain, then erases them all in one call", async () => {
    const { ws, memberToken, managerToken } = await workspace();
    const writer = await apiClient(memberToken);
    await remember(writer, observation("Prefers calls."));
    const manager = await host(managerToken);
    await remember(manager.mcp, observation("Pays late."));

    const stepUp = await forget(manager.mcp, SUBJECT).catch((error: unknown) => error);
    expect(stepUp).toBeInstanceOf(UnauthorizedError);
    const refused = manager.seen.at(-1);
    expect(refused?.status).toBe(403);
    expect(refused?.challenge).toBe(
      `Bearer error="insufficient_scope", scope="${MEMBER_SCOPES.join(" ")} admin", resource_metadata="${server.base}/.well-known/oauth-protected-resource"`,
    );
    // Decided before anything was erased: both memories are still there.
    const before = (await held(writer, SUBJECT.subject_type, SUBJECT.subject_id)).structured;
    expect(before.memories.filter((m) => m.body !== null)).toHaveLength(2);

    // The SDK asked for the token's scopes plus admin; the manager approves in the browser.
    const url = manager.provider.authorizationUrl;
    expect(url?.searchParams.get("scope")?.split(" ")).toContain("admin");
    const landed = await authorizeInBrowser(
      manager.page,
      url as URL,
      manager.provider.redirectUri,
      (p) => decide(p, "allow"),
    );
    await manager.transport.finishAuth(landed.searchParams.get("code") ?? "");
    expect(manager.scopes()).toContain("admin");

    const erased = await forget(manager.mcp, SUBJECT);
    expect(erased.structured).toMatchObject({ outcome: "forgotten", forgotten: 2, remaining: 0 });
    expect(manager.seen.at(-1)?.status).toBe(200);
    const [audit] = await db.owner.client<{ n: number; affected: number }[]>`
      select count(*)::int as n, max(affected)::int as affected from audit_events
      where actor_id = ${ws.manager.userId} and tool = 'north__memory_forget'`;
    expect(audit).toEqual({ n: 1, affected: 2 });
    await manager.mcp.close();
    await writer.close();
  });

  it("steps a manager up to forget one memory a colleague wrote, named by id", async () => {
    const { memberToken, managerToken } = await workspace();
    const writer = await apiClient(memberToken);
    const written = await remember(writer, observation("Wants weekly reports."));
    const memoryId = String(written.structured?.memory_id);
    const manager = await host(managerToken);

    const stepUp = await forget(manager.mcp, { memory_id: memoryId }).catch((e: unknown) => e);
    expect(stepUp).toBeInstanceOf(UnauthorizedError);
    expect(manager.seen.at(-1)?.status).toBe(403);
    expect(manager.provider.authorizationUrl?.searchParams.get("scope")?.split(" ")).toContain(
      "admin",
    );
    const still = (await held(writer, SUBJECT.subject_type, SUBJECT.subject_id)).structured;
    expect(still.memories.find((m) => m.memory_id === memoryId)?.body).toBe(
      "Wants weekly reports.",
    );
    await manager.mcp.close();
    await writer.close();
  });

  it("never steps a plain member up: their erasure runs and counts what others wrote", async () => {
    const { managerToken, memberToken } = await workspace();
    const writer = await apiClient(managerToken);
    await remember(writer, observation("Has a new CFO."));
    const member = await host(memberToken);
    await remember(member.mcp, observation("Signed in Lyon."));

    const receipt = await forget(member.mcp, SUBJECT);
    expect(receipt.structured).toMatchObject({ outcome: "forgotten", forgotten: 1, remaining: 1 });
    expect(member.seen.map((s) => s.status)).not.toContain(403);
    await member.mcp.close();
    await writer.close();
  });

  it("does not step a manager up when nothing a colleague wrote is at stake", async () => {
    const { managerToken } = await workspace();
    const manager = await host(managerToken);
    await remember(manager.mcp, observation("Moved to Paris."));

    const receipt = await forget(manager.mcp, SUBJECT);
    expect(receipt.structured).toMatchObject({ outcome: "forgotten", forgotten: 1, remaining: 0 });
    expect(manager.seen.map((s) => s.status)).not.toContain(403);
    expect(manager.scopes()).not.toContain("admin");
    await manager.mcp.close();
  });
});
