/**
 * Issue 21, point 12, with the real Claude Code CLI (2.1.197): a manager who signs in through
 * Claude Code gets the member scopes only, and reaches `admin` by step-up (decision 030). The
 * manager signs in on North's page with an API token that has all four scopes, so nothing but
 * what Claude Code asks for keeps `admin` out of the grant. Then `claude -p` (a stand-in
 * Messages API asks for it) erases what a colleague wrote about a client: North answers 403
 * insufficient_scope naming `admin`, and this suite records what Claude Code does with it, in
 * `-p` mode and in an interactive session (decision 030, "Measured with Claude Code 2.1.197").
 *
 * Each stage runs once, in whichever check first needs it ({@link signedIn}, {@link steppedUp},
 * {@link reauthenticatedInSession}, {@link reauthorized}), so each check also runs alone (the
 * acceptance-mutation runner does).
 */
import { authorizationServerTables as ast, createApiToken } from "@north/db";
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addNorth,
  authorizeInChromium,
  CLAUDE_CODE_CLIENT_ID,
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
import { connectMcpClient } from "../support/mcp-client.ts";
import { remember } from "../support/memory-tools.ts";
import {
  type MessagesApi,
  type SeenToolResult,
  startMessagesApi,
} from "../support/messages-api.ts";
import {
  decide,
  type McpAnswer,
  type SignInServer,
  signInWithToken,
  startSignInServer,
} from "../support/sign-in.ts";

const MEMBER_SCOPES = ["profile:write", "memory:read", "memory:write"];
const STEP_UP_SCOPES = [...MEMBER_SCOPES, "admin"];
const SUBJECT = { subject_type: "client", subject_id: "Acme SAS" };

let db: TestDatabase;
let host: MetadataHost;
let server: SignInServer;
let browser: Browser;
let messages: MessagesApi;
let claude: ClaudeCode;
let ws: Workspace;
let managerToken: string;

beforeAll(async () => {
  db = await createTestDatabase();
  host = await startMetadataHost();
  server = await startSignInServer(db, { cimd: host });
  browser = await launchChromium();
  messages = await startMessagesApi();
  claude = await startClaudeCode({ messagesApi: messages.url });
  ws = await createWorkspace(db.owner.db);
  managerToken = (
    await createApiToken(db.owner.db, { ...ws.manager, scopes: STEP_UP_SCOPES, expiresAt: null })
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

/** On North's pages: the manager signs in with their four-scope API token and allows. */
async function allowAsManager(page: Page): Promise<void> {
  await signInWithToken(page, managerToken);
  await decide(page, "allow");
}

/** Claude Code's one stored OAuth entry for North. */
async function northEntry(): Promise<ClaudeOAuthEntry> {
  const entries = (await claude.oauthEntries()).filter((e) => e.serverName === "north");
  expect(entries).toHaveLength(1);
  return entries[0] as ClaudeOAuthEntry;
}

const tokenScopes = (entry: ClaudeOAuthEntry) =>
  String(decodeJwt(entry.accessToken).scope).split(" ");

/** The manager's grant to Claude Code (the library's consent row). */
async function managerGrant() {
  const grants = await db.owner.db
    .select({ scopes: ast.oauthConsent.scopes })
    .from(ast.oauthConsent)
    .where(
      and(
        eq(ast.oauthConsent.clientId, CLAUDE_CODE_CLIENT_ID),
        eq(ast.oauthConsent.userId, ws.manager.userId),
      ),
    );
  expect(grants).toHaveLength(1);
  return grants[0];
}

/** How many of the colleague's memories about the subject still have their body. */
async function colleaguesLiveMemories(): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`
    select count(*)::int as n from memories
    where organization_id = ${ws.organizationId} and author_id = ${ws.member.userId}
      and body is not null`;
  return row?.n ?? -1;
}

/** Waits until `done()` holds. */
async function until(done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `claude mcp login north`, its browser step in Chromium as the manager. */
async function login(): Promise<{ authorizeUrl: URL; run: ClaudeRun }> {
  const running = claude.start(["mcp", "login", "north"]);
  try {
    const authorizeUrl = await authorizeInChromium(claude, browser, allowAsManager);
    return { authorizeUrl, run: await running.done };
  } catch (error) {
    throw new Error(`${(error as Error).message}\nclaude mcp login said:\n${running.output()}`);
  } finally {
    await running.stop();
  }
}

/** What one `claude -p` asking to forget the subject showed, on each side. */
interface ForgetRun {
  run: ClaudeRun;
  /** North's answers to the MCP calls made during the run. */
  answers: McpAnswer[];
  /** URLs Claude Code asked its browser to open during the run. */
  browserUrls: URL[];
  /** What the model received as the tool's result. */
  result: SeenToolResult | undefined;
}

/** `claude -p` with the stand-in model calling `north__memory_forget` on the subject. */
async function forgetThroughClaude(): Promise<ForgetRun> {
  const answersBefore = server.mcpAnswers.length;
  const urlsBefore = (await claude.browserUrls()).length;
  const resultsBefore = messages.toolResults.length;
  messages.script({ tool: "north__memory_forget", input: SUBJECT });
  const run = await claude.run(
    [
      "-p",
      "Forget everything we hold about Acme SAS.",
      "--allowedTools",
      "mcp__north__north__memory_forget",
    ],
    120_000,
  );
  return {
    run,
    answers: server.mcpAnswers.slice(answersBefore),
    browserUrls: (await claude.browserUrls()).slice(urlsBefore),
    result: messages.toolResults.slice(resultsBefore).find((r) => r.toolName.endsWith("forget")),
  };
}

let signingIn: Promise<{ authorizeUrl: URL; run: ClaudeRun; entry: ClaudeOAuthEntry }> | null =
  null;
/** `claude mcp add` and `claude mcp login north` as the manager. Runs once. */
function signedIn() {
  signingIn ??= (async () => {
    await addNorth(claude, `${server.base}/mcp`);
    const { authorizeUrl, run } = await login();
    return { authorizeUrl, run, entry: await northEntry() };
  })();
  return signingIn;
}

let steppingUp: Promise<ForgetRun & { before: ClaudeOAuthEntry; after: ClaudeOAuthEntry }> | null =
  null;
/**
 * Signed in; a colleague writes two memories about the subject (with their API token, through
 * North's own tools); then the manager's `claude -p` asks to forget the subject. Runs once.
 */
function steppedUp() {
  steppingUp ??= (async () => {
    await signedIn();
    const colleague = await createApiToken(db.owner.db, {
      ...ws.member,
      scopes: MEMBER_SCOPES,
      expiresAt: null,
    });
    const writer = await connectMcpClient(`${server.base}/mcp`, {
      token: colleague.token,
      name: "colleague",
    });
    for (const body of ["Prefers calls.", "Pays late."]) {
      const written = await remember(writer, {
        kind: "observation",
        origin: "stated",
        body,
        ...SUBJECT,
      });
      expect(written.isError, written.text).toBe(false);
    }
    await writer.close();
    expect(await colleaguesLiveMemories()).toBe(2);
    const before = await northEntry();
    const forgetRun = await forgetThroughClaude();
    return { ...forgetRun, before, after: await northEntry() };
  })();
  return steppingUp;
}

let inSession: Promise<{
  result: SeenToolResult | undefined;
  answers: McpAnswer[];
  authorizeUrl: URL;
}> | null = null;
/**
 * After the refused `claude -p`: the same request in an interactive session, then `/mcp` →
 * north → "Re-authenticate", up to the URL it opens (not followed: the next login does). Once.
 */
function reauthenticatedInSession() {
  inSession ??= (async () => {
    await steppedUp();
    const answersBefore = server.mcpAnswers.length;
    const resultsBefore = messages.toolResults.length;
    const session = await claude.interactive([
      "--allowedTools",
      "mcp__north__north__memory_forget",
    ]);
    try {
      await session.waitForScreen(/forshortcuts/);
      messages.script({ tool: "north__memory_forget", input: SUBJECT });
      // The session connects to North in the background: a prompt sent before North's tools
      // are loaded is answered without them (the scripted call stays pending), so ask again.
      for (let attempt = 0; ; attempt += 1) {
        const asked = messages.offeredTools.length;
        session.type("Forget everything we hold about Acme SAS.");
        await new Promise((r) => setTimeout(r, 500));
        session.type("\r");
        await until(() => messages.offeredTools.length > asked);
        if (messages.offeredTools.at(-1)?.some((tool) => tool.endsWith("memory_forget"))) break;
        expect(attempt, "North's tools never reached the session").toBeLessThan(5);
        await new Promise((r) => setTimeout(r, 2_000));
      }
      // The tool's result reaches the model with the next request; the session then warns.
      await until(() => messages.toolResults.length > resultsBefore);
      const result = messages.toolResults
        .slice(resultsBefore)
        .find((r) => r.toolName.endsWith("forget"));
      await session.waitForScreen(/1MCPserverneedsauthentication·run\/mcp/);
      await new Promise((r) => setTimeout(r, 1_000));
      session.type("/mcp");
      await session.waitForScreen(/\/mcpManageMCPservers/);
      session.type("\r");
      await session.waitForScreen(/△needsauthentication/);
      session.type("\r");
      await session.waitForScreen(/Re-authenticate/);
      session.type("\r");
      const authorizeUrl = await claude.nextBrowserUrl();
      return { result, answers: server.mcpAnswers.slice(answersBefore), authorizeUrl };
    } finally {
      await session.stop();
    }
  })();
  return inSession;
}

let reauthorizing: Promise<{ authorizeUrl: URL; run: ClaudeRun; retried: ForgetRun }> | null = null;
/** After the refused erasure: `claude mcp login north` again, then the same `claude -p`. */
function reauthorized() {
  reauthorizing ??= (async () => {
    await steppedUp();
    // Run alone or after it, never beside the session (both open Claude Code's browser).
    await inSession?.catch(() => undefined);
    const { authorizeUrl, run } = await login();
    return { authorizeUrl, run, retried: await forgetThroughClaude() };
  })();
  return reauthorizing;
}

describe("Claude Code: a manager gets the member scopes and steps up to admin", () => {
  it("asks for the member scopes only when a manager signs in, and the grant carries no admin", async () => {
    const { authorizeUrl, run, entry } = await signedIn();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(authorizeUrl.searchParams.get("scope")?.split(" ")).toEqual(MEMBER_SCOPES);
    // The manager's API token had admin: only what Claude Code asked for kept it out.
    expect(tokenScopes(entry)).toEqual(expect.arrayContaining(MEMBER_SCOPES));
    expect(tokenScopes(entry)).not.toContain("admin");
    expect(String(entry.scope).split(" ")).not.toContain("admin");
    expect((await managerGrant())?.scopes).not.toContain("admin");
  });

  it("meets the 403 in `claude -p` without re-authorizing: the model is told, nothing is erased", async () => {
    const { run, answers, browserUrls, result, before, after } = await steppedUp();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // North refused the erasure before running it, naming the token's scopes plus admin…
    expect(answers.at(-1)).toEqual({
      status: 403,
      challenge: `Bearer error="insufficient_scope", scope="${STEP_UP_SCOPES.join(" ")}", resource_metadata="${server.base}/.well-known/oauth-protected-resource"`,
    });
    expect(answers.filter((a) => a.status === 403)).toHaveLength(1);
    expect(await colleaguesLiveMemories()).toBe(2);
    // …and Claude Code 2.1.197 in -p mode neither retries, refreshes nor opens a browser: it
    // keeps the challenge's scope for its next login and tells the model to re-authorize.
    expect(browserUrls).toEqual([]);
    expect(result).toEqual({
      toolName: "mcp__north__north__memory_forget",
      text: 'MCP server "north" requires re-authorization (token expired)',
      isError: true,
    });
    expect(after.accessToken).toBe(before.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken);
    expect(after.stepUpScope).toBe(STEP_UP_SCOPES.join(" "));
    const listed = await claude.run(["mcp", "list"]);
    expect(listed.stdout.split("\n").find((line) => line.startsWith("north"))).toMatch(/Connected/);
  });

  it("marks North as needing authentication in a session, whose /mcp re-authentication asks for admin", async () => {
    const { result, answers, authorizeUrl } = await reauthenticatedInSession();
    expect(answers.at(-1)?.status).toBe(403);
    expect(result?.isError).toBe(true);
    expect(result?.text).toBe('MCP server "north" requires re-authorization (token expired)');
    expect(await colleaguesLiveMemories()).toBe(2);
    expect(authorizeUrl.searchParams.get("client_id")).toBe(CLAUDE_CODE_CLIENT_ID);
    expect(authorizeUrl.searchParams.get("scope")?.split(" ")).toEqual(STEP_UP_SCOPES);
  });

  it("asks for admin at the next `claude mcp login north`, and the retried call erases it all", async () => {
    const { authorizeUrl, run, retried } = await reauthorized();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(authorizeUrl.searchParams.get("scope")?.split(" ")).toEqual(STEP_UP_SCOPES);
    expect((await managerGrant())?.scopes).toEqual(expect.arrayContaining(STEP_UP_SCOPES));
    const entry = await northEntry();
    expect(tokenScopes(entry)).toEqual(expect.arrayContaining(STEP_UP_SCOPES));
    // Claude Code still holds the step-up scope after that login.
    expect(entry.stepUpScope).toBe(STEP_UP_SCOPES.join(" "));
    expect(retried.run.code, retried.run.stdout + retried.run.stderr).toBe(0);
    expect(retried.answers.map((a) => a.status)).not.toContain(403);
    expect(retried.result?.isError, retried.result?.text).toBe(false);
    expect(JSON.parse(retried.result?.text ?? "{}")).toEqual({
      outcome: "forgotten",
      forgotten: 2,
      remaining: 0,
    });
    expect(await colleaguesLiveMemories()).toBe(0);
  });
});
