import { randomUUID } from "node:crypto";
import { LEGACY_QUESTION_LABEL, RETIRED_QUESTION_IDS, subjectKey } from "@north/agent-runtime";
import { createApiToken, createFingerprinter } from "@north/db";
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
import { TEST_AUDIT_KEY } from "./support/mcp.ts";

/** The admin console (SPEC §8) in a real headless Chromium against the real server. */

const SECRET = `Private detail ${randomUUID()}`;
const SUBJECT = { type: "client", id: `Dupont ${randomUUID().slice(0, 6)}` };

let db: TestDatabase;
let ws: Workspace;
let other: Workspace;
let server: TestConsole;
let browser: Browser;
let base: string;
const tokens = { manager: "", managerWithoutAdmin: "", member: "" };

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Console");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  const sql = db.owner.client;
  await sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, question_text, answer)
            values (${ws.organizationId}, ${ws.member.userId}, 'ctx-custom', 'Do you sign in blue ink?', 'Always blue.'),
                   (${ws.organizationId}, ${ws.manager.userId}, 'client-tone', 'How formal with clients?', 'Very formal.'),
                   (${other.organizationId}, ${other.member.userId}, 'ctx-x', 'Elsewhere question?', 'Elsewhere answer.')`;
  await sql`insert into working_profile_answers (organization_id, owner_user_id, question_id, answer)
            values (${ws.organizationId}, ${ws.member.userId}, ${RETIRED_QUESTION_IDS[0] ?? ""}, 'An old answer.')`;
  const fingerprint = createFingerprinter(TEST_AUDIT_KEY)(subjectKey(SUBJECT)).fingerprint;
  await sql`insert into memories (organization_id, author_id, kind, origin, body, subject_type, subject_id, subject_fingerprint, run_id, expires_at)
            values (${ws.organizationId}, ${ws.member.userId}, 'observation', 'stated', ${SECRET}, ${SUBJECT.type}, ${SUBJECT.id}, ${fingerprint}, 'seed', now() + interval '30 days')`;

  const mint = async (userId: string, scopes: string[]) =>
    (
      await createApiToken(db.owner.db, {
        organizationId: ws.organizationId,
        userId,
        scopes,
        expiresAt: null,
      })
    ).token;
  tokens.manager = await mint(ws.manager.userId, ["admin"]);
  tokens.managerWithoutAdmin = await mint(ws.manager.userId, ["profile:write"]);
  tokens.member = await mint(ws.member.userId, ["admin"]);

  server = await startTestConsole(db);
  base = server.base;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db.drop();
});

const signedIn = (token: string): Promise<Page> => signedInWith(browser, base, token);

describe("the admin console", () => {
  it("shows a manager every member's working profile, with the transcription notice and fallback labels", async () => {
    const page = await signedIn(tokens.manager);
    expect(page.url()).toBe(`${base}/admin/profiles`);
    const text = await page.textContent("main");
    expect(text).toContain("transcription of what the lawyer said");
    for (const expected of [
      "member",
      "manager",
      "Do you sign in blue ink?",
      "Always blue.",
      "How formal with clients?",
      LEGACY_QUESTION_LABEL,
      "not recorded",
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain("Elsewhere");
    expect(await page.locator("tr[data-question-id]").count()).toBe(3);
    await page.screenshot({ path: "/tmp/north-admin-profiles.png", fullPage: true });
  });

  it("lists what is held about a subject and erases it, leaving a tombstone", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/memories`);
    const search = async (subjectId: string) => {
      await page.fill('input[name="subject_type"]', SUBJECT.type);
      await page.fill('input[name="subject_id"]', subjectId);
      await follow(page, "form[data-search] button");
    };
    await search(SUBJECT.id.toUpperCase());
    expect(await page.textContent("main")).toContain(SECRET);
    expect(await page.locator('tr[data-state="live"]').count()).toBe(1);

    // No script dialog: the confirmation is a page that names the subject and the count.
    page.on("dialog", () => expect.fail("erasure must not ask through a script dialog"));
    await follow(page, "button[data-erase-all]");
    expect(await page.textContent("[data-confirm-what]")).toContain(
      `Erase the 1 memory held about client “${SUBJECT.id}”`,
    );
    await Promise.all([
      page.waitForURL(`${base}/admin/memories?erased=1`),
      page.click('button:text("Yes, erase 1 memory")'),
    ]);
    expect(await page.textContent("main")).toContain("1 memory erased");
    await search(SUBJECT.id);
    const after = await page.textContent("main");
    expect(after).toContain("body removed");
    expect(after).not.toContain(SECRET);
    expect(await page.locator('tr[data-state="forgotten"]').count()).toBe(1);
    const [row] = await db.owner
      .client`select body, forgotten_by from memories where organization_id = ${ws.organizationId}`;
    expect(row).toEqual({ body: null, forgotten_by: ws.manager.userId });
  });

  it("shows recent audit events without bodies or subject names", async () => {
    const page = await signedIn(tokens.manager);
    await page.goto(`${base}/admin/audit`);
    const text = (await page.textContent("main")) ?? "";
    for (const tool of ["admin_profiles", "admin_memory_held", "admin_memory_forget"])
      expect(text).toContain(tool);
    expect(text).toContain("forgotten");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SUBJECT.id);
    await page.screenshot({ path: "/tmp/north-admin-audit.png", fullPage: true });
  });

  it("refuses an ordinary member, even one holding an admin-scoped token", async () => {
    const page = await signedIn(tokens.member);
    expect(await page.textContent("main")).toContain("This console is for workspace managers");
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([]);
    // A token is never a session: sent as a header it opens nothing.
    const direct = await fetch(`${base}/admin/profiles`, {
      headers: { Authorization: `Bearer ${tokens.member}` },
      redirect: "manual",
    });
    expect(direct.status).toBe(303);
    expect(await direct.text()).not.toContain("Always blue.");
  });

  it("refuses a manager's token without the admin scope, and an unknown token", async () => {
    const page = await signedIn(tokens.managerWithoutAdmin);
    expect(await page.textContent("main")).toContain("This console is for workspace managers");
    const unknown = await signedIn(`north_${"x".repeat(43)}`);
    expect(await unknown.textContent("main")).toContain("not valid");
  });
});
