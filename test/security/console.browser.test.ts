import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { subjectKey } from "@north/agent-runtime";
import { createApiToken, createFingerprinter, revokeApiToken } from "@north/db";
import { buildAdminApp } from "@north/web";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  follow,
  launchChromium,
  signedIn,
  startTestConsole,
  type TestConsole,
} from "../support/console.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createWorkspace, type Workspace } from "../support/fixtures.ts";
import { TEST_AUDIT_KEY } from "../support/mcp.ts";

/**
 * Security review of the admin console (issue 10): each test performs an attack on the real
 * server (transport guard, body limit, console, PostgreSQL on the app login role) and shows it
 * no longer succeeds. Where a browser is the attacker, it is headless Chromium and the hostile
 * page is served by this file on another loopback port.
 */

const fingerprint = createFingerprinter(TEST_AUDIT_KEY);
/** Subject for the CSRF attacks (must survive them) and one for the erasure flow. */
const KEPT = {
  type: "client",
  id: `Kept ${randomUUID().slice(0, 8)}`,
  body: `Kept ${randomUUID()}`,
};
const ERASED = {
  type: "client",
  id: `Moreau ${randomUUID().slice(0, 8)}`,
  body: `Gone ${randomUUID()}`,
};
const ANSWER = `Answer ${randomUUID()}`;

let db: TestDatabase;
let ws: Workspace;
let console_: TestConsole;
let base: string;
let browser: Browser;
let attacker: Server;
let attackerBase: string;
/** Hostile pages by path, served on another loopback port. */
const hostile = new Map<string, string>();
let managerToken: string;

const mint = async (w: Workspace, userId: string, scopes = ["admin"]) =>
  createApiToken(db.owner.db, {
    organizationId: w.organizationId,
    userId,
    scopes,
    expiresAt: null,
  });

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Secure");
  const sql = db.owner.client;
  for (const s of [KEPT, ERASED]) {
    await sql`insert into memories (organization_id, author_id, kind, origin, body, subject_type, subject_id, subject_fingerprint, run_id, expires_at)
              values (${ws.organizationId}, ${ws.member.userId}, 'observation', 'stated', ${s.body}, ${s.type}, ${s.id},
                      ${fingerprint(subjectKey(s)).fingerprint}, 'seed', now() + interval '30 days')`;
  }
  await sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
            values (${ws.organizationId}, ${ws.member.userId}, 'ctx-ink', 'Ink colour?', ${ANSWER})`;
  managerToken = (await mint(ws, ws.manager.userId)).token;
  console_ = await startTestConsole(db);
  base = console_.base;
  browser = await launchChromium();
  attacker = createServer((request, response) => {
    const page = hostile.get(request.url ?? "");
    response.writeHead(page ? 200 : 404, { "Content-Type": "text/html; charset=utf-8" });
    response.end(page ?? "not found");
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerBase = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await console_?.close();
  await db.drop();
});

/** Signs in over plain HTTP (no Origin, as a script would): the cookie pair and the raw header. */
async function signInByFetch(token: string, at = base) {
  const response = await fetch(`${at}/admin/login`, {
    method: "POST",
    body: new URLSearchParams({ token }),
    redirect: "manual",
  });
  expect(response.status).toBe(303);
  const setCookie = response.headers.get("set-cookie") ?? "";
  return {
    setCookie,
    cookie: setCookie.split(";")[0] ?? "",
    value: /=([^;]*)/.exec(setCookie)?.[1] ?? "",
  };
}

const get = (path: string, cookie: string) =>
  fetch(`${base}${path}`, { headers: { cookie }, redirect: "manual" });

const post = (path: string, cookie: string, form: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { cookie },
    body: new URLSearchParams(form),
    redirect: "manual",
  });

/** The session's CSRF token, read from a page's form as a browser would see it. */
async function csrfOf(cookie: string): Promise<string> {
  const html = await (await get("/admin/memories", cookie)).text();
  const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  expect(token).toBeDefined();
  return token ?? "";
}

const keptBody = async () =>
  (await db.owner.client`select body, forgotten_at from memories where subject_id = ${KEPT.id}`)[0];

const auditCount = async (tool: string) =>
  (
    await db.owner.client`select count(*)::int as n from audit_events
                          where organization_id = ${ws.organizationId} and tool = ${tool}`
  )[0]?.n as number;

/** A hostile page that posts an erase form for KEPT to the console as soon as it loads. */
function eraseFormPage(referrer: "default" | "no-referrer") {
  return `<!doctype html><html><head>${
    referrer === "no-referrer" ? '<meta name="referrer" content="no-referrer">' : ""
  }</head><body>
    <form id="f" method="post" action="${base}/admin/memories/forget">
      <input name="subject_type" value="${KEPT.type}"><input name="subject_id" value="${KEPT.id}">
      <input name="csrf_token" value="${randomBytes(32).toString("base64url")}">
    </form><script>document.getElementById("f").submit();</script></body></html>`;
}

describe("F2: cross-site request forgery and clickjacking", () => {
  it.each(["default", "no-referrer"] as const)(
    "a page on another loopback port cannot erase memories through a signed-in manager's browser (referrer %s)",
    async (referrer) => {
      const page = await signedIn(browser, base, managerToken);
      expect(page.url()).toBe(`${base}/admin/profiles`);
      const path = `/erase-${referrer}`;
      hostile.set(path, eraseFormPage(referrer));
      const answered = page.waitForResponse(`${base}/admin/memories/forget`);
      await page.goto(`${attackerBase}${path}`);
      const response = await answered;
      expect(response.status()).toBe(403);
      expect(await keptBody()).toEqual({ body: KEPT.body, forgotten_at: null });
      expect(await auditCount("admin_memory_forget")).toBe(0);
      await page.context().close();
    },
  );

  it("refuses a POST without the session's CSRF token, or with a wrong one, with 403 and changes nothing", async () => {
    const { cookie } = await signInByFetch(managerToken);
    const csrf = await csrfOf(cookie);
    const erase = { subject_type: KEPT.type, subject_id: KEPT.id };
    const forged = randomBytes(32).toString("base64url");
    for (const form of [erase, { ...erase, csrf_token: forged }, { ...erase, csrf_token: "" }]) {
      const refused = await post("/admin/memories/forget", cookie, form);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain("nothing was changed");
    }
    // Another session's token is no better than a forged one.
    const other = await signInByFetch(managerToken);
    const crossed = await post("/admin/memories/forget", cookie, {
      ...erase,
      csrf_token: await csrfOf(other.cookie),
    });
    expect(crossed.status).toBe(403);
    const signOut = await post("/admin/logout", cookie, {});
    expect(signOut.status).toBe(403);
    expect(await keptBody()).toEqual({ body: KEPT.body, forgotten_at: null });
    expect(await auditCount("admin_memory_forget")).toBe(0);
    // The same session with its own token is served: the refusals above were the token's.
    const search = await post("/admin/memories", cookie, { ...erase, csrf_token: csrf });
    expect(search.status).toBe(200);
    expect(await search.text()).toContain(KEPT.body);
  });

  it("sends the anti-framing, CSP, referrer and no-store headers on every console response", async () => {
    const { cookie } = await signInByFetch(managerToken);
    const csrf = await csrfOf(cookie);
    const responses = [
      await get("/admin/login", ""),
      await get("/admin/profiles", ""),
      await get("/admin/profiles", cookie),
      await get("/admin/memories", cookie),
      await get("/admin/audit", cookie),
      await get("/admin/console.css", cookie),
      await get("/admin/no-such-page", cookie),
      await post("/admin/memories", cookie, { subject_type: "client", subject_id: "x" }),
      await post("/admin/memories", cookie, {
        subject_type: "client",
        subject_id: "x",
        csrf_token: csrf,
      }),
      await post("/admin/login", "", { token: "north_not-a-token" }),
    ];
    const missing = responses.filter((r) => !r.headers.get("content-security-policy"));
    expect(missing.map((r) => `${r.status} ${r.url}`)).toEqual([]);
    expect(responses.map((r) => r.status)).toEqual([
      200, 303, 200, 200, 200, 200, 404, 403, 200, 401,
    ]);
    for (const response of responses) {
      const csp = response.headers.get("content-security-policy") ?? "";
      for (const directive of [
        "default-src 'self'",
        "frame-ancestors 'none'",
        "form-action 'self'",
      ])
        expect(csp).toContain(directive);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("does not render inside a frame on another origin, even for a signed-in manager", async () => {
    const page = await signedIn(browser, base, managerToken);
    hostile.set(
      "/frame",
      `<!doctype html><html><body><h1>Win a prize</h1>
        <iframe id="victim" src="${base}/admin/profiles" width="800" height="600"></iframe></body></html>`,
    );
    const refusals: string[] = [];
    page.on("console", (message) => refusals.push(message.text()));
    const framed = page.waitForResponse(`${base}/admin/profiles`);
    await page.goto(`${attackerBase}/frame`);
    expect((await framed).status()).toBe(200); // The browser got the page, and refused to show it.
    await page.waitForTimeout(500);
    const child = page.frames().find((f) => f !== page.mainFrame());
    const shown = child ? await child.textContent("body").catch(() => "") : "";
    expect(shown ?? "").not.toContain(ANSWER);
    expect(shown ?? "").not.toContain("Working profiles");
    expect(child?.url() ?? "").not.toBe(`${base}/admin/profiles`);
    expect(refusals.join("\n")).toMatch(/frame-ancestors 'none'|Refused to (display|frame)/);
    await page.context().close();
  });
});

describe("F8: server-side sessions", () => {
  it("hands the browser an opaque id, not the token, and stores only its hash, bound to member and token", async () => {
    const minted = await mint(ws, ws.manager.userId);
    const { setCookie, value } = await signInByFetch(minted.token);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits
    expect(value).not.toBe(minted.token);
    expect(minted.token).not.toContain(value);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/admin");
    expect(setCookie).not.toContain("Secure"); // plain http, no https public URL
    const hash = createHash("sha256").update(value).digest("hex");
    const rows = await db.owner.client`
      select s.*, s.expires_at - s.created_at as lifetime from admin_sessions s where token_id = ${minted.id}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      session_hash: hash,
      organization_id: ws.organizationId,
      user_id: ws.manager.userId,
      idle_timeout_s: 30 * 60,
      lifetime: "08:00:00",
      ended_at: null,
    });
    const everything = await db.owner.client`select s::text as row from admin_sessions s`;
    for (const { row } of everything) {
      expect(row).not.toContain(value);
      expect(row).not.toContain(minted.token);
    }
  });

  it("marks the cookie Secure when the public URL is https, or the request came over https", async () => {
    const behindTls = await startTestConsole(db, { publicUrl: "https://north.example-firm.fr" });
    try {
      expect((await signInByFetch(managerToken, behindTls.base)).setCookie).toMatch(/; Secure/);
    } finally {
      await behindTls.close();
    }
    const direct = buildAdminApp({ db: db.app.db, auditKey: TEST_AUDIT_KEY, logger: console });
    const overHttps = await direct.request("https://127.0.0.1/admin/login", {
      method: "POST",
      body: new URLSearchParams({ token: managerToken }),
    });
    expect(overHttps.status).toBe(303);
    expect(overHttps.headers.get("set-cookie")).toMatch(/; Secure/);
  });

  it("ends the session at sign-out: the old cookie replayed afterwards is refused", async () => {
    const { cookie } = await signInByFetch(managerToken);
    expect((await get("/admin/profiles", cookie)).status).toBe(200);
    const out = await post("/admin/logout", cookie, { csrf_token: await csrfOf(cookie) });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/admin/login");
    const replayed = await get("/admin/profiles", cookie);
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get("location")).toBe("/admin/login");
    expect(await replayed.text()).not.toContain(ANSWER);
  });

  it("ends the session at once when its token is revoked", async () => {
    const minted = await mint(ws, ws.manager.userId);
    const { cookie } = await signInByFetch(minted.token);
    expect((await get("/admin/profiles", cookie)).status).toBe(200);
    await revokeApiToken(db.owner.db, { id: minted.id });
    expect((await get("/admin/profiles", cookie)).status).toBe(303);
    const [row] = await db.owner
      .client`select ended_at from admin_sessions where token_id = ${minted.id}`;
    expect(row?.ended_at).not.toBeNull();
  });

  it("ends the session at once when its member is removed or no longer a manager", async () => {
    const other = await createWorkspace(db.owner.db, "Leaving");
    for (const change of ["removed", "demoted"] as const) {
      await db.owner.client`update members set removed_at = null, role = 'manager'
                            where user_id = ${other.manager.userId}`;
      const { cookie } = await signInByFetch((await mint(other, other.manager.userId)).token);
      expect((await get("/admin/profiles", cookie)).status).toBe(200);
      if (change === "removed")
        await db.owner
          .client`update members set removed_at = now() where user_id = ${other.manager.userId}`;
      else
        await db.owner
          .client`update members set role = 'member' where user_id = ${other.manager.userId}`;
      expect((await get("/admin/profiles", cookie)).status).toBe(303);
    }
  });

  it("honours the idle window and the absolute expiry", async () => {
    const idle = await signInByFetch(managerToken);
    const absolute = await signInByFetch(managerToken);
    expect((await get("/admin/profiles", idle.cookie)).status).toBe(200);
    const hashOf = (v: string) => createHash("sha256").update(v).digest("hex");
    await db.owner.client`update admin_sessions set last_seen_at = now() - interval '31 minutes'
                          where session_hash = ${hashOf(idle.value)}`;
    await db.owner.client`update admin_sessions set created_at = now() - interval '9 hours',
                            expires_at = now() - interval '1 hour'
                          where session_hash = ${hashOf(absolute.value)}`;
    expect((await get("/admin/profiles", idle.cookie)).status).toBe(303);
    expect((await get("/admin/profiles", absolute.cookie)).status).toBe(303);
    // A request just inside the window keeps the session (and restarts the window).
    const active = await signInByFetch(managerToken);
    await db.owner.client`update admin_sessions set last_seen_at = now() - interval '29 minutes'
                          where session_hash = ${hashOf(active.value)}`;
    expect((await get("/admin/profiles", active.cookie)).status).toBe(200);
  });

  it("takes the idle window from the app's options", async () => {
    const brief = await startTestConsole(db, { sessionTimeouts: { idleS: 1 } });
    try {
      const { cookie } = await signInByFetch(managerToken, brief.base);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const after = await fetch(`${brief.base}/admin/profiles`, {
        headers: { cookie },
        redirect: "manual",
      });
      expect(after.status).toBe(303);
    } finally {
      await brief.close();
    }
  });
});

describe("F9: one structured error handler", () => {
  it("answers a failing console request with a page naming the request id, and logs no stack, body or query", async () => {
    const { cookie } = await signInByFetch(managerToken);
    const csrf = await csrfOf(cookie);
    const secretQuery = `q${randomUUID()}`;
    const sql = db.owner.client;
    // A function gone missing (42883) is a fault, not a refusal the console knows how to show.
    await sql`alter function audit_events_for_admin rename to audit_events_for_admin_off`;
    await sql`revoke update on memories from app_role`;
    try {
      const failures = [
        await get(`/admin/audit?subject_id=${secretQuery}`, cookie),
        await post("/admin/memories/forget", cookie, {
          subject_type: KEPT.type,
          subject_id: KEPT.id,
          csrf_token: csrf,
        }),
      ];
      for (const failure of failures) {
        expect(failure.status).toBe(500);
        expect(failure.headers.get("content-type")).toContain("text/html");
        expect(failure.headers.get("x-frame-options")).toBe("DENY");
        const requestId = failure.headers.get("x-request-id") ?? "";
        const page = await failure.text();
        expect(page).toContain("Something went wrong");
        expect(page).toContain(requestId);
        for (const leak of [
          "permission denied",
          "PostgresError",
          "DrizzleQueryError",
          "    at ",
          "select ",
          "update ",
        ])
          expect(page).not.toContain(leak);
        const lines = console_.logs.filter((l) => l.includes(requestId));
        expect(lines).toHaveLength(1);
        const line = JSON.parse(lines[0] ?? "{}");
        expect(line).toMatchObject({ level: 50, requestId, msg: "console request failed" });
        expect(line.stack).toBeUndefined();
        for (const leak of [secretQuery, KEPT.id, KEPT.body, csrf, "?", "stack"])
          expect(lines[0]).not.toContain(leak);
      }
      expect(
        JSON.parse(console_.logs.find((l) => l.includes("/admin/audit")) ?? "{}"),
      ).toMatchObject({
        path: "/admin/audit",
        method: "GET",
      });
    } finally {
      await sql`alter function audit_events_for_admin_off rename to audit_events_for_admin`;
      await sql`grant update (body, subject_id, embedding, forgotten_at, forgotten_by) on memories to app_role`;
    }
    expect(await keptBody()).toEqual({ body: KEPT.body, forgotten_at: null });
  });
});

describe("F10: personal data stays out of URLs", () => {
  it("searches and erases by POST, redirects after the erasure, and leaves no subject name in any URL", async () => {
    const page: Page = await signedIn(browser, base, managerToken);
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    page.on("framenavigated", (frame) => urls.push(frame.url()));
    await page.goto(`${base}/admin/memories`);
    await page.fill('input[name="subject_type"]', ERASED.type);
    await page.fill('input[name="subject_id"]', ERASED.id);
    await follow(page, "form[data-search] button");
    expect(await page.textContent("main")).toContain(ERASED.body);
    expect(page.url()).toBe(`${base}/admin/memories`);

    // The confirmation is a page reached by POST, which names the subject and the count.
    await Promise.all([
      page.waitForURL(`${base}/admin/memories/confirm`),
      page.click("button[data-erase-all]"),
    ]);
    const erased = page.waitForResponse(`${base}/admin/memories/forget`);
    await Promise.all([
      page.waitForURL(`${base}/admin/memories?erased=1`),
      page.click('form[action="/admin/memories/forget"] button'),
    ]);
    expect((await erased).status()).toBe(303);
    expect(await page.textContent("main")).toContain("1 memory erased");
    // Refreshing the landing page re-sends nothing.
    await page.reload();
    expect(await auditCount("admin_memory_forget")).toBe(1);

    const history = await page.evaluate(() => {
      const w = globalThis as unknown as {
        location: { href: string };
        document: { referrer: string };
      };
      return [w.location.href, w.document.referrer];
    });
    for (const url of [...urls, ...history, page.url()]) {
      for (const form of [ERASED.id, encodeURIComponent(ERASED.id), ERASED.id.replace(" ", "+")])
        expect(url).not.toContain(form);
    }
    await page.context().close();
  });

  it("does not search on a GET, whatever its query string says", async () => {
    const { cookie } = await signInByFetch(managerToken);
    const before = await auditCount("admin_memory_held");
    const query = new URLSearchParams({
      subject_type: KEPT.type,
      subject_id: KEPT.id,
      subject: KEPT.id,
    });
    const response = await get(`/admin/memories?${query}`, cookie);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain(KEPT.body);
    // The page lists the subjects held (SPEC §8), KEPT among them, but reviews none of them.
    expect(html).not.toContain("data-review");
    expect(await auditCount("admin_memory_held")).toBe(before);
  });
});
