import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { canonicalSubjectId, subjectKey } from "@north/agent-runtime";
import {
  createApiToken,
  createFingerprinter,
  forgetMemories,
  purgeExpiredMemories,
  rememberMemory,
  withTenant,
} from "@north/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  follow,
  launchChromium,
  signedIn as signedInWith,
  startTestConsole,
  type TestConsole,
} from "./support/console.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { createTestApp, TEST_AUDIT_KEY, type TestApp } from "./support/mcp.ts";
import { remember } from "./support/memory-tools.ts";

/** The console's Memories section (SPEC §8) in a real headless Chromium against the real server. */

const tag = randomUUID().slice(0, 6);
/** Written first as `HELENE`, then (most recently) as `Hélène`: the list shows the latter. */
const HELENE = { type: "client", id: `Hélène Dubois-${tag}`, older: `HELENE DUBOIS-${tag}` };
const ACME = { type: "counterparty", id: `Acme Holdings ${tag}` };
const JEAN = { type: "colleague", id: `Jean Martin ${tag}` };
const BODIES = {
  heleneStated: `Prefers calls before ten ${tag}. <b>not bold</b>`,
  heleneInferred: `Seems to distrust email ${tag}.`,
  heleneManager: `Asked for fixed fees ${tag}.`,
  acmeLive: `Acme's general counsel signs everything ${tag}.`,
  acmeExpired: `Acme moved offices ${tag}.`,
  jean: `Jean covers the Lyon court ${tag}.`,
  factOne: `Filings in the Paris court go through the e-filing portal ${tag}.`,
  factTwo: `The office closes at six ${tag}.`,
  elsewhere: `ELSEWHERE about Hélène ${tag}.`,
};
const fingerprintOf = (id: string) =>
  createFingerprinter(TEST_AUDIT_KEY)(subjectKey({ id })).fingerprint;

let db: TestDatabase;
let ws: Workspace;
let other: Workspace;
let harness: TestApp;
let server: TestConsole;
let browser: Browser;
let base: string;
let token = "";
const emails = { manager: "", member: "" };
/** Every URL any console page of this suite requested. */
const requested: string[] = [];
let dialogs = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Memories");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  harness = createTestApp({ db });
  const member = await harness.connect(ws.member);
  const manager = await harness.connect(ws.manager, { role: "manager" });
  const elsewhere = await harness.connect(other.member);
  const remembered = [
    await remember(member, {
      kind: "observation",
      origin: "stated",
      body: BODIES.heleneStated,
      subject_type: HELENE.type,
      subject_id: HELENE.older,
    }),
    await remember(member, {
      kind: "fact",
      origin: "inferred",
      body: BODIES.heleneInferred,
      subject_type: HELENE.type,
      subject_id: HELENE.older,
      conversation_id: "matter-42",
    }),
    await remember(manager, {
      kind: "observation",
      origin: "stated",
      body: BODIES.heleneManager,
      subject_type: HELENE.type,
      subject_id: HELENE.id,
    }),
    await remember(member, {
      kind: "observation",
      origin: "stated",
      body: BODIES.acmeExpired,
      subject_type: ACME.type,
      subject_id: ACME.id,
    }),
    await remember(member, {
      kind: "observation",
      origin: "stated",
      body: BODIES.jean,
      subject_type: JEAN.type,
      subject_id: JEAN.id,
    }),
    await remember(member, { kind: "fact", origin: "stated", body: BODIES.factOne }),
    await remember(manager, { kind: "fact", origin: "inferred", body: BODIES.factTwo }),
    await remember(elsewhere, {
      kind: "observation",
      origin: "stated",
      body: BODIES.elsewhere,
      subject_type: HELENE.type,
      subject_id: HELENE.id,
    }),
    await remember(elsewhere, { kind: "fact", origin: "stated", body: BODIES.elsewhere }),
  ];
  for (const r of remembered) expect(r.structured?.outcome).toBe("created");
  // One memory written from a local (stdio) session, through the store the server uses.
  const created = await withTenant(db.app.db, ws.member, (tx) =>
    rememberMemory(tx, {
      author: ws.member,
      kind: "observation",
      origin: "stated",
      body: BODIES.acmeLive,
      subjectType: ACME.type,
      subjectId: ACME.id,
      runId: `stdio:${randomUUID()}`,
      fingerprint: (key) => createFingerprinter(TEST_AUDIT_KEY)(key).fingerprint,
    }),
  );
  expect(created.outcome).toBe("created");
  const sql = db.owner.client;
  await sql`update memories set expires_at = now() - interval '1 day',
              created_at = now() - interval '100 days'
            where body = ${BODIES.acmeExpired}`;
  const rows = await sql<{ user_id: string; email: string }[]>`
    select user_id, email from members where organization_id = ${ws.organizationId}`;
  emails.manager = rows.find((r) => r.user_id === ws.manager.userId)?.email ?? "";
  emails.member = rows.find((r) => r.user_id === ws.member.userId)?.email ?? "";

  token = (
    await createApiToken(db.owner.db, {
      organizationId: ws.organizationId,
      userId: ws.manager.userId,
      scopes: ["admin"],
      expiresAt: null,
    })
  ).token;
  server = await startTestConsole(db);
  base = server.base;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await harness?.close();
  await db?.drop();
});

/** A manager's page on /admin/memories, recording every URL it requests and every dialog. */
async function memoriesPage(): Promise<Page> {
  const page = await signedInWith(browser, base, token);
  page.context().on("request", (request) => requested.push(request.url()));
  page.on("dialog", (dialog) => {
    dialogs += 1;
    void dialog.dismiss();
  });
  await page.goto(`${base}/admin/memories`);
  return page;
}

async function search(page: Page, type: string, id: string) {
  await page.fill('form[data-search] input[name="subject_type"]', type);
  await page.fill('form[data-search] input[name="subject_id"]', id);
  await follow(page, "form[data-search] button");
}

const review = (page: Page, subject: { type: string; id: string }) =>
  follow(page, `button[aria-label="Review ${subject.type} ${subject.id}"]`);

const cells = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((tds) => tds.map((td) => td.textContent?.trim() ?? ""));

const mainText = async (page: Page) => (await page.textContent("main")) ?? "";

const forgetAudits = async () =>
  (
    await db.owner.client`select count(*)::int as n from audit_events
      where organization_id = ${ws.organizationId} and tool = 'admin_memory_forget'`
  )[0]?.n as number;

describe("the console's memories", () => {
  it("lists the subjects held: type, id as last written, live count and newest date", async () => {
    const page = await memoriesPage();
    const row = (type: string) => `table[data-subjects] tr[data-subject-type="${type}"] td`;
    const today = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeZone: "UTC" }).format(
      new Date(),
    );
    expect(await cells(page, row("client"))).toEqual(["client", HELENE.id, "3", today, "Review"]);
    const acme = await cells(page, row("counterparty"));
    expect(acme.slice(0, 2)).toEqual(["counterparty", ACME.id]);
    expect(acme[2]).toBe("1 (+ 1 expired, awaiting purge)");
    expect(await page.locator("table[data-subjects] tbody tr").count()).toBe(3);
    expect(await page.textContent("[data-unsubjected]")).toContain("2 live memories");
    expect(await mainText(page)).not.toContain("ELSEWHERE");
    await page.screenshot({ path: "/tmp/north-admin-memories.png", fullPage: true });
  });

  it("finds a subject whatever its case, accents and spacing, with author and origin on every row", async () => {
    const page = await memoriesPage();
    await search(page, "Client", `  helene   dubois-${tag.toUpperCase()} `);
    expect(page.url()).toBe(`${base}/admin/memories`);
    expect(await page.textContent("[data-review]")).toBe(`Memories about client “${HELENE.id}”`);
    const text = await mainText(page);
    for (const body of [BODIES.heleneStated, BODIES.heleneInferred, BODIES.heleneManager]) {
      expect(text).toContain(body);
    }
    expect(text).not.toContain(BODIES.elsewhere);
    expect(await page.locator("b").count()).toBe(0);
    expect(await page.locator('tr[data-state="live"]').count()).toBe(3);
    const authors = await cells(page, 'td[data-label="Author"]');
    expect(authors.sort()).toEqual([emails.manager, emails.member, emails.member].sort());
    const origins = await cells(page, 'td[data-label="Origin"]');
    expect(origins.filter((o) => o === "Inferred by the assistant")).toHaveLength(1);
    expect(origins.filter((o) => o === "Stated by the lawyer")).toHaveLength(2);
    const runs = await cells(page, 'td[data-label="Run"]');
    expect(runs).toContain("Conversation matter-42");
    expect(runs.filter((r) => r.startsWith("Claude request"))).toHaveLength(2);

    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: "/tmp/north-admin-memory-review-390.png", fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.goto(`${base}/admin/memories`);
    await search(page, "", "Nobody Held Here");
    expect(await page.textContent('[role="status"]')).toMatch(
      /Nothing is held about “Nobody Held Here”.*ignores case, accents and spacing/,
    );
    await search(page, "counterparty", HELENE.id);
    expect(await page.textContent('[role="status"]')).toContain("another type (client)");
    await search(page, "not a type!", HELENE.id);
    expect(await page.textContent('p.notice.error[role="alert"]')).toContain("subject type");
  });

  it("erases everything about a subject after a confirmation naming it and the count", async () => {
    const page = await memoriesPage();
    await review(page, HELENE);
    await follow(page, "button[data-erase-all]");
    expect(page.url()).toBe(`${base}/admin/memories/confirm`);
    const question = (await page.textContent("[data-confirm-what]")) ?? "";
    expect(question).toContain(`Erase all 3 memories held about client “${HELENE.id}”`);
    await page.screenshot({ path: "/tmp/north-admin-memory-confirm.png", fullPage: true });
    await follow(page, 'button:text("Yes, erase 3 memories")');
    expect(page.url()).toBe(`${base}/admin/memories?erased=3`);
    expect(await page.textContent("p.notice.success")).toContain("3 memories erased");
    expect(await page.locator("table[data-subjects]").textContent()).not.toContain(HELENE.id);
    expect(await forgetAudits()).toBe(1);

    // A refresh of the result page is a GET: nothing is erased twice, nothing is re-posted.
    await page.reload();
    expect(await forgetAudits()).toBe(1);

    await search(page, "client", HELENE.id);
    expect(await page.locator('tr[data-state="forgotten"]').count()).toBe(3);
    const states = await cells(page, 'td[data-label="State"]');
    for (const state of states) expect(state).toMatch(/^Erased on .* by .*, body removed$/);
    expect(states[0]).toContain(emails.manager);
    const text = await mainText(page);
    for (const body of [BODIES.heleneStated, BODIES.heleneInferred, BODIES.heleneManager]) {
      expect(text).not.toContain(body);
    }
    expect(await page.locator("button[data-erase-all]").count()).toBe(0);
    const rows = await db.owner.client`select body, subject_id, forgotten_by from memories
      where organization_id = ${ws.organizationId} and subject_type = 'client'`;
    expect(rows).toEqual(
      Array(3).fill({ body: null, subject_id: null, forgotten_by: ws.manager.userId }),
    );
    const [kept] = await db.owner.client`select body from memories
      where organization_id = ${other.organizationId} and subject_type = 'client'`;
    expect(kept?.body).toBe(BODIES.elsewhere);
    expect(dialogs).toBe(0);
  });

  it("erases one memory after a confirmation naming its kind, date and author, or cancels", async () => {
    const page = await memoriesPage();
    await review(page, ACME);
    expect(await page.locator('tr[data-state="expired"]').count()).toBe(1);
    const live = 'tr[data-state="live"] button:text("Erase…")';
    await follow(page, live);
    const question = (await page.textContent("[data-confirm-what]")) ?? "";
    expect(question).toContain(`Erase this observation about counterparty “${ACME.id}”`);
    expect(question).toContain(emails.member);
    expect(question).toMatch(/written \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC/);
    expect(await page.textContent("main blockquote")).toContain(BODIES.acmeLive);

    await follow(page, 'button:text("Cancel")');
    expect(await page.locator('tr[data-state="live"]').count()).toBe(1);
    expect(await forgetAudits()).toBe(1);

    await follow(page, live);
    await follow(page, 'button:text("Yes, erase 1 memory")');
    expect(page.url()).toBe(`${base}/admin/memories?erased=1`);
    expect(await page.textContent("p.notice.success")).toContain("1 memory erased");
    await review(page, ACME);
    expect(await page.locator('tr[data-state="forgotten"]').count()).toBe(1);
    expect(await page.textContent('tr[data-state="expired"] td[data-label="Memory"]')).toBe(
      BODIES.acmeExpired,
    );
    expect(await mainText(page)).not.toContain(BODIES.acmeLive);
  });

  it("reviews and erases the memories without a subject", async () => {
    const page = await memoriesPage();
    await follow(page, 'button:text("Review memories without a subject")');
    const text = await mainText(page);
    expect(text).toContain(BODIES.factOne);
    expect(text).toContain(BODIES.factTwo);
    expect(text).not.toContain(BODIES.elsewhere);
    await follow(page, "button[data-erase-all]");
    expect(await page.textContent("[data-confirm-what]")).toContain(
      "Erase all 2 memories held without a subject",
    );
    await follow(page, 'button:text("Yes, erase 2 memories")');
    expect(page.url()).toBe(`${base}/admin/memories?erased=2`);
    expect(await page.textContent("[data-unsubjected]")).toContain("0 live memories, 2 tombstones");
    await follow(page, 'button:text("Review memories without a subject")');
    expect(await page.locator('tr[data-state="forgotten"]').count()).toBe(2);
    expect(await mainText(page)).not.toContain(BODIES.factOne);
    const [kept] = await db.owner.client`select count(*)::int as n from memories
      where organization_id = ${other.organizationId} and subject_fingerprint is null and body is not null`;
    expect(kept?.n).toBe(1);
  });

  it("downloads what is held as JSON: live bodies, tombstones without", async () => {
    const page = await memoriesPage();
    const everything = await download(page, 'a[href="/admin/memories/export.json"]');
    expect(everything.scope).toBe("organization");
    expect(everything.count).toBe(8);
    const byBody = (body: string) => everything.memories.find((m) => m.body === body);
    expect(byBody(BODIES.jean)).toMatchObject({
      state: "live",
      subject_type: JEAN.type,
      subject_id: JEAN.id,
      author_email: emails.member,
      origin: "stated",
    });
    expect(byBody(BODIES.acmeExpired)).toMatchObject({ state: "expired" });
    const tombstones = everything.memories.filter((m) => m.state === "forgotten");
    expect(tombstones).toHaveLength(6);
    for (const t of tombstones) {
      expect(t).toMatchObject({ body: null, subject_id: null, forgotten_by_email: emails.manager });
    }
    const raw = JSON.stringify(everything);
    for (const erased of [BODIES.heleneStated, BODIES.acmeLive, BODIES.factOne, BODIES.elsewhere]) {
      expect(raw).not.toContain(erased);
    }

    // One subject, POSTed from its review: an access request answered in one click.
    await review(page, JEAN);
    const one = await download(page, 'button:text("Download as JSON")');
    expect(one.scope).toBe("subject");
    expect(one.subject).toEqual({ subject_type: JEAN.type, subject_id: JEAN.id });
    expect(one.memories.map((m) => m.body)).toEqual([BODIES.jean]);

    const response = await page.request.get(`${base}/admin/memories/export.json`);
    expect(response.headers()["content-disposition"]).toMatch(/^attachment; filename="north-/);
  });

  it("counts a purged memory as nothing left to erase, and never marks it erased", async () => {
    expect((await purgeExpiredMemories(db.maintenance.db)).purged).toBe(1);
    const page = await memoriesPage();
    expect(await page.locator("table[data-subjects]").textContent()).not.toContain(ACME.id);
    await search(page, "", ACME.id);
    expect(await page.textContent('tr[data-state="purged"] td[data-label="State"]')).toMatch(
      /^Expired on .*, body purged$/,
    );
    expect(await page.locator("button[data-erase-all]").count()).toBe(0);
    const forgot = await withTenant(db.app.db, ws.manager, (tx) =>
      forgetMemories(tx, {
        requester: ws.manager,
        isManager: true,
        target: { subjectFingerprint: fingerprintOf(ACME.id) },
      }),
    );
    expect(forgot).toEqual({ outcome: "noop", forgotten: 0, remaining: 0, heldBack: 0 });
    const [purged] = await db.owner.client`select forgotten_at, purged_at from memories
      where organization_id = ${ws.organizationId} and expires_at < now()`;
    expect(purged?.forgotten_at).toBeNull();
    expect(purged?.purged_at).not.toBeNull();
  });

  it("keeps subject names out of every URL and the audit ledger (fingerprints only)", async () => {
    const names = [HELENE.id, HELENE.older, ACME.id, JEAN.id, "Nobody Held Here"];
    const forms = names.flatMap((n) => [n, canonicalSubjectId(n), encodeURIComponent(n)]);
    expect(requested.length).toBeGreaterThan(20);
    for (const url of requested) {
      const decoded = decodeURIComponent(url.replaceAll("+", " "));
      for (const name of forms) expect(decoded.toLowerCase()).not.toContain(name.toLowerCase());
    }
    const audit = await db.owner.client`select * from audit_events
      where organization_id = ${ws.organizationId} and tool like 'admin_memory%'`;
    const ledger = JSON.stringify(audit).toLowerCase();
    for (const text of [...forms, ...Object.values(BODIES)]) {
      expect(ledger).not.toContain(text.toLowerCase());
    }
    const erased = audit.find(
      (e) => e.tool === "admin_memory_forget" && e.target_fingerprint === fingerprintOf(HELENE.id),
    );
    expect(erased).toMatchObject({ outcome: "forgotten", affected: 3 });
    expect(
      audit.some(
        (e) => e.tool === "admin_memory_held" && e.target_fingerprint === fingerprintOf(HELENE.id),
      ),
    ).toBe(true);
    expect(audit.filter((e) => e.tool === "admin_memory_export")).toHaveLength(3);
  });
});

interface ExportedMemory {
  body: string | null;
  state: string;
  subject_id: string | null;
  [key: string]: unknown;
}

/** Clicks what starts a download and returns the JSON document downloaded. */
async function download(
  page: Page,
  selector: string,
): Promise<{
  scope: string;
  subject?: unknown;
  count: number;
  memories: ExportedMemory[];
}> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  expect(file.suggestedFilename()).toMatch(/^north-memories.*\.json$/);
  return JSON.parse(await readFile((await file.path()) ?? "", "utf8"));
}
