/**
 * Issue 21's Must-show: the Claude Code sign-in path end to end, with the real Claude Code CLI
 * (2.1.197) as the client. Its Client ID Metadata Document is served locally under its real id
 * (https://claude.ai/oauth/claude-code-client-metadata) through the CIMD transport's test seam;
 * the CLI runs its own OAuth flow (`claude mcp login`) in a private HOME, its "browser" hands
 * the authorization URL to headless Chromium, which signs in with an API token and consents;
 * the CLI's own loopback listener (a port, against registered URIs without one: RFC 8252 §7.3)
 * receives the code and exchanges it. Then a tool call through `claude -p` (a stand-in Messages
 * API asks for it), a refresh, and a revocation that the CLI's next call meets.
 *
 * The sign-in runs once, in whichever check comes first ({@link signedIn}), so each check also
 * runs alone (the acceptance-mutation runner runs one check at a time).
 */
import { authorizationServerTables as ast, createApiToken } from "@north/db";
import { and, eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addNorth,
  authorizeInChromium,
  CLAUDE_CODE_CLIENT_ID,
  CLAUDE_CODE_DOCUMENT,
  type ClaudeCode,
  type ClaudeOAuthEntry,
  type ClaudeRun,
  type MetadataHost,
  startClaudeCode,
  startMetadataHost,
} from "../support/claude-code.ts";
import { launchChromium } from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";
import { type MessagesApi, startMessagesApi } from "../support/messages-api.ts";
import { northJson } from "../support/processes.ts";
import {
  decide,
  type SignInServer,
  signInWithToken,
  startSignInServer,
} from "../support/sign-in.ts";

let db: TestDatabase;
let host: MetadataHost;
let server: SignInServer;
let browser: Browser;
let messages: MessagesApi;
let claude: ClaudeCode;
let ws: Workspace;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  host = await startMetadataHost();
  server = await startSignInServer(db, { cimd: host });
  browser = await launchChromium();
  messages = await startMessagesApi();
  claude = await startClaudeCode({ messagesApi: messages.url });
  ws = await createWorkspace(db.owner.db);
  token = (
    await createApiToken(db.owner.db, {
      ...ws.member,
      scopes: ["profile:write", "memory:read", "memory:write"],
      expiresAt: null,
    })
  ).token;
});
afterAll(async () => {
  await claude?.close();
  await messages?.close();
  await browser?.close();
  await server?.close();
  await host?.close();
  await db?.drop();
});

/** Claude Code's one stored OAuth entry for North. */
async function northEntry(): Promise<ClaudeOAuthEntry> {
  const entries = (await claude.oauthEntries()).filter((e) => e.serverName === "north");
  expect(entries).toHaveLength(1);
  return entries[0] as ClaudeOAuthEntry;
}

/** `claude mcp list`'s line for North (it health-checks each server, with its stored tokens). */
async function northStatus(): Promise<string> {
  const listed = await claude.run(["mcp", "list"]);
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout.split("\n").find((line) => line.startsWith("north")) ?? listed.stdout;
}

/** What the one sign-in showed: the URL Claude Code built, the consent page, how login ended. */
interface SignedIn {
  authorizeUrl: URL;
  consent: string;
  login: ClaudeRun;
}
let signingIn: Promise<SignedIn> | null = null;

/**
 * `claude mcp add` then `claude mcp login north`, its browser step in Chromium: sign in with the
 * member's API token, allow. Runs once; later callers get the same outcome.
 */
function signedIn(): Promise<SignedIn> {
  signingIn ??= (async () => {
    await addNorth(claude, `${server.base}/mcp`);
    const login = claude.start(["mcp", "login", "north"]);
    try {
      let consent = "";
      const authorizeUrl = await authorizeInChromium(claude, browser, async (page) => {
        await signInWithToken(page, token);
        await page.waitForSelector('button[value="allow"]');
        consent = (await page.textContent("main")) ?? "";
        await decide(page, "allow");
      });
      return { authorizeUrl, consent, login: await login.done };
    } catch (error) {
      throw new Error(`${(error as Error).message}\nclaude mcp login said:\n${login.output()}`);
    } finally {
      await login.stop();
    }
  })();
  return signingIn;
}

/** The member's grant to Claude Code (the library's consent row). */
async function claudeGrant() {
  const [grant] = await db.owner.db
    .select({ id: ast.oauthConsent.id, scopes: ast.oauthConsent.scopes })
    .from(ast.oauthConsent)
    .where(
      and(
        eq(ast.oauthConsent.clientId, CLAUDE_CODE_CLIENT_ID),
        eq(ast.oauthConsent.userId, ws.member.userId),
      ),
    );
  return grant;
}

describe("Claude Code signs in to North end to end", () => {
  it("asks with its metadata document id, a loopback port and the metadata's scopes", async () => {
    const { authorizeUrl } = await signedIn();
    const asked = authorizeUrl.searchParams;
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(
      `${server.base}/oauth/oauth2/authorize`,
    );
    expect(asked.get("client_id")).toBe(CLAUDE_CODE_CLIENT_ID);
    expect(asked.get("redirect_uri")).toMatch(/^http:\/\/localhost:\d+\/callback$/);
    expect(asked.get("code_challenge_method")).toBe("S256");
    expect(asked.get("resource")).toBe(`${server.base}/mcp`);
    // Claude Code 2.1.197 asks for exactly what the protected-resource metadata lists, whatever
    // the 401 challenge says: that list is what a host gets by default (issue 21, point 12).
    const resource = (await (
      await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as { scopes_supported: string[] };
    expect(asked.get("scope")?.split(" ")).toEqual(resource.scopes_supported);
  });

  it("signs in with the live document, its port accepted against portless URIs, and stores tokens", async () => {
    const { consent, login, authorizeUrl } = await signedIn();
    expect(login.code, login.stdout + login.stderr).toBe(0);
    expect(consent).toContain("Claude Code");
    // North read the document from (the stand-in for) claude.ai, not its pinned copy.
    expect(host.requests).toContain(new URL(CLAUDE_CODE_CLIENT_ID).pathname);
    expect(server.logs.join("\n")).not.toContain('"pinned":true');
    const [client] = await db.owner.db
      .select({ redirectUris: ast.oauthClient.redirectUris })
      .from(ast.oauthClient)
      .where(eq(ast.oauthClient.clientId, CLAUDE_CODE_CLIENT_ID));
    expect(client?.redirectUris).toEqual(CLAUDE_CODE_DOCUMENT.redirect_uris);
    const entry = await northEntry();
    expect(entry.clientId).toBe(CLAUDE_CODE_CLIENT_ID);
    expect(entry.redirectUri).toBe(authorizeUrl.searchParams.get("redirect_uri"));
    expect(entry.accessToken).toMatch(/^ey/);
    expect(entry.refreshToken).toBeTruthy();
    expect((await claudeGrant())?.scopes).not.toContain("admin");
  });

  it("shows North connected in `claude mcp list`", async () => {
    await signedIn();
    expect(await northStatus()).toMatch(/Connected/);
  });

  it("calls a North tool through Claude Code", async () => {
    await signedIn();
    const answer = `Short drafts, sentinel ${Date.now()}`;
    messages.script({
      tool: "north__working_profile_answer",
      input: { question: "How do you like drafts?", answer },
    });
    const run = await claude.run(
      [
        "-p",
        "Remember how I like my drafts.",
        "--allowedTools",
        "mcp__north__north__working_profile_answer",
      ],
      120_000,
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const [result] = messages.toolResults.filter((r) =>
      r.toolName.endsWith("working_profile_answer"),
    );
    expect(result?.isError, result?.text).toBe(false);
    const rows = await db.owner.client`
      select answer from working_profile_answers where owner_user_id = ${ws.member.userId}`;
    expect(rows.map((row) => row.answer)).toContain(answer);
  });

  it("refreshes its access token with the rotating refresh token", async () => {
    await signedIn();
    const before = await northEntry();
    await claude.editOAuthEntries((entry) => {
      entry.expiresAt = Date.now() - 60_000;
    });
    expect(await northStatus()).toMatch(/Connected/);
    const after = await northEntry();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).toBeTruthy();
    expect(after.refreshToken).not.toBe(before.refreshToken);
  });

  it("meets a revoked grant at its next call", async () => {
    await signedIn();
    const { accessToken } = await northEntry();
    const grant = await claudeGrant();
    const revoked = await northJson(["grant", "revoke", grant?.id ?? ""], {
      DATABASE_URL: db.ownerUrl,
      NORTH_AUDIT_KEY: TEST_AUDIT_KEY,
    });
    expect(revoked).toEqual({ id: grant?.id, revoked: true });
    const call = await fetch(`${server.base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${accessToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(call.status).toBe(401);
    expect(await northStatus()).toMatch(/Needs authentication/);
  });
});
