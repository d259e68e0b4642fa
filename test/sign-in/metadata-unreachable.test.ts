/**
 * Issue 21, point 11: a Client ID Metadata Document that cannot be fetched. The attack (or the
 * accident: claude.ai answering a datacenter address with a challenge page) used to end on the
 * library's raw JSON body in the person's browser, with nothing in North's log. Now it ends on
 * North's own page, saying in words what went wrong, and one log line names the reason class —
 * never the document's path or anything its host answered. A refused fetch has no organisation
 * yet, so that log line is the record (no audit row). Decision 032: Claude Code's document has a
 * pinned copy used only when claude.ai cannot be read.
 */
import { randomBytes } from "node:crypto";
import { get } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLAUDE_CODE_CLIENT_ID,
  CLAUDE_CODE_DOCUMENT,
  type MetadataHost,
  startMetadataHost,
} from "../support/claude-code.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { type SignInServer, startSignInServer } from "../support/sign-in.ts";

let db: TestDatabase;
let host: MetadataHost;
let server: SignInServer;

beforeAll(async () => {
  db = await createTestDatabase();
  host = await startMetadataHost("claude.ai", { timeoutMs: 1_500 });
  server = await startSignInServer(db, { cimd: host });
});
afterAll(async () => {
  await server?.close();
  await host?.close();
  await db?.drop();
});

/**
 * A GET as a browser navigation sends it (node:http, because fetch always says
 * `Sec-Fetch-Mode: cors`, which the library answers with `{ redirect: true, url }` instead of a
 * 302), not following redirects.
 */
function navigate(url: URL) {
  return new Promise<{ response: Response; text: string; location: string | null }>(
    (resolve, reject) => {
      const headers = {
        accept: "text/html,application/xhtml+xml",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
      };
      get(url, { headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === "string") answer.set(name, value);
          }
          const response = new Response(text, { status: res.statusCode, headers: answer });
          resolve({ response, text, location: answer.get("location") });
        });
      }).on("error", reject);
    },
  );
}

/** An authorization request as a host builds it. */
function authorizeUrl(
  target: SignInServer,
  clientId: string,
  redirectUri: string,
  scope = "memory:read",
) {
  const url = new URL(`${target.base}/oauth/oauth2/authorize`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    state: "st",
    code_challenge: randomBytes(32).toString("base64url"),
    code_challenge_method: "S256",
    resource: `${target.base}/mcp`,
  }).toString();
  return url;
}

/** The same, opened in the browser. */
const authorize = (...args: Parameters<typeof authorizeUrl>) => navigate(authorizeUrl(...args));

/** The log lines, parsed. */
const logged = (target: SignInServer) =>
  target.logs.map((line) => JSON.parse(line) as Record<string, unknown>);

/** North's own page: HTML with the sign-in pages' security headers, never a JSON body. */
function expectNorthPage(response: Response, text: string) {
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).not.toBe(500);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(response.headers.get("x-frame-options")).toBe("DENY");
  expect(text).toMatch(/^<!doctype html>/i);
  expect(text).not.toMatch(/"error"\s*:/);
  expect(text).not.toContain("invalid_client");
}

const challengePage = "<!doctype html><title>Just a moment...</title><p>sentinel-body</p>";

describe("a metadata document that cannot be read", () => {
  it.each([
    ["network", "reset" as const],
    ["timeout", "hang" as const],
    [
      "size",
      {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ padding: "sentinel-body".repeat(800) }),
      },
    ],
    ["status", { status: 500, headers: { "content-type": "text/plain" }, body: "sentinel-body" }],
    [
      "challenge",
      {
        status: 403,
        headers: { "content-type": "text/html; charset=UTF-8", "cf-mitigated": "challenge" },
        body: challengePage,
      },
    ],
    ["challenge", { status: 200, headers: { "content-type": "text/html" }, body: challengePage }],
    [
      "invalid_document",
      {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_id: "https://elsewhere.example/sentinel-body" }),
      },
    ],
  ])("ends on North's page saying so, with a log line naming %s", async (failure, answer) => {
    const path = `/oauth/case-${randomBytes(4).toString("hex")}`;
    host.answer(path, answer);
    const { response, text } = await authorize(
      server,
      `https://claude.ai${path}`,
      "http://localhost:40001/callback",
    );
    expectNorthPage(response, text);
    expect(text).toContain("could not read");
    expect(text).toContain("claude.ai");
    expect(host.requests).toContain(path);
    const line = logged(server).find((entry) => entry.failure === failure);
    expect(line).toMatchObject({ host: "claude.ai", failure });
    expect(line?.requestId).toEqual(expect.any(String));
    const all = server.logs.join("\n");
    expect(all).not.toContain(path);
    expect(all).not.toContain("sentinel-body");
    expect(all).not.toContain("Just a moment");
  });

  it("turns the library's other errors into a page, and keeps an error redirect to the client", async () => {
    // An unknown client: never a redirect to it, and no raw JSON body at the end either.
    const unknown = await authorize(server, "no-such-client", "http://localhost:40002/callback");
    expectNorthPage(unknown.response, unknown.text);
    // The same asked by a script (`{ redirect: true, url }` to the library's error URL).
    const scripted = await fetch(
      authorizeUrl(server, "no-such-client", "http://localhost:40002/callback"),
      { redirect: "manual" },
    );
    expectNorthPage(scripted, await scripted.text());

    // A registered client asking for a scope North does not have: the client hears of it.
    const registered = (await (
      await fetch(`${server.base}/oauth/oauth2/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "Scope asker",
          redirect_uris: ["http://127.0.0.1:40003/callback"],
          token_endpoint_auth_method: "none",
        }),
      })
    ).json()) as { client_id: string };
    const scoped = await authorize(
      server,
      registered.client_id,
      "http://127.0.0.1:40003/callback",
      "no-such-scope",
    );
    expect(scoped.response.status).toBe(302);
    const back = new URL(scoped.location ?? "");
    expect(back.origin + back.pathname).toBe("http://127.0.0.1:40003/callback");
    expect(back.searchParams.get("error")).toBe("invalid_scope");
  });
});

describe("Claude Code's pinned document (decision 032)", () => {
  /** A fresh server per check: the library caches a document it accepted. */
  async function withServer(run: (fresh: SignInServer) => Promise<void>) {
    const fresh = await startSignInServer(db, { cimd: host });
    try {
      await run(fresh);
    } finally {
      await fresh.close();
    }
  }
  const claudePath = new URL(CLAUDE_CODE_CLIENT_ID).pathname;
  afterAll(() => host.serve(claudePath, CLAUDE_CODE_DOCUMENT));

  it.each([
    ["challenge", { status: 403, headers: { "cf-mitigated": "challenge" }, body: challengePage }],
    ["network", "reset" as const],
    ["status", { status: 503 }],
  ])("stands in when claude.ai cannot be read (%s)", async (failure, answer) => {
    host.answer(claudePath, answer);
    await withServer(async (fresh) => {
      const { location } = await authorize(
        fresh,
        CLAUDE_CODE_CLIENT_ID,
        "http://localhost:40004/callback",
      );
      expect(location).toMatch(/^\/sign-in\?/);
      expect(logged(fresh)).toContainEqual(
        expect.objectContaining({ host: "claude.ai", failure, pinned: true }),
      );
    });
  });

  it.each([
    [
      "a live document",
      {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...CLAUDE_CODE_DOCUMENT, redirect_uris: ["http://localhost/live"] }),
      },
    ],
    [
      "an invalid live document",
      {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...CLAUDE_CODE_DOCUMENT, client_id: "https://claude.ai/other" }),
      },
    ],
    ["a withdrawn document", { status: 404 }],
    [
      "an oversized document",
      { status: 200, headers: { "content-type": "application/json" }, body: " ".repeat(8_000) },
    ],
  ])("never stands in for %s", async (_name, answer) => {
    host.answer(claudePath, answer);
    await withServer(async (fresh) => {
      const { response, text } = await authorize(
        fresh,
        CLAUDE_CODE_CLIENT_ID,
        "http://localhost:40005/callback",
      );
      expectNorthPage(response, text);
      expect(logged(fresh).some((entry) => entry.pinned === true)).toBe(false);
    });
  });
});
