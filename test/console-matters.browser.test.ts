import {
  addMember,
  addScreen,
  addToTeam,
  createApiToken,
  createMatter,
  holdMatter,
  type Tenant,
  withOrganization,
} from "@north/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  follow,
  launchChromium,
  signedIn,
  startTestConsole,
  type TestConsole,
} from "./support/console.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp } from "./support/mcp.ts";
import { remember } from "./support/memory-tools.ts";

/**
 * The console's Matters pages (SPEC §5a) in a real headless Chromium: the list, a page per matter
 * with its team, screens (with reasons), hold and memories as this manager may see them, and a
 * member's walls on their page. A manager screened from a matter sees none of its memories.
 */

const REF = "2026/0042";
const SECRET = "Jean Dupont accepts a settlement up to 2 M€";
const REASON = "Acted for the other side at her former firm";

let db: TestDatabase;
let ws: Workspace;
let harness: TestApp;
let server: TestConsole;
let browser: Browser;
/** A manager on the matter's team, and a manager screened from it. */
const tokens = { teamManager: "", screenedManager: "" };
let screenedManager: Tenant;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Matters");
  harness = createTestApp({ db });
  const second = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: "screened.manager@matters.test",
    role: "manager",
  });
  screenedManager = { organizationId: ws.organizationId, userId: second.userId };
  await withOrganization(db.owner.db, ws.organizationId, async (tx) => {
    const matter = await createMatter(tx, {
      organizationId: ws.organizationId,
      reference: REF,
      name: "Dupont v. Martin",
      client: "Jean Dupont",
      access: "restricted",
    });
    for (const userId of [ws.manager.userId, ws.member.userId, second.userId]) {
      await addToTeam(tx, { organizationId: ws.organizationId, matterId: matter.id, userId });
    }
    await addScreen(tx, {
      organizationId: ws.organizationId,
      matterId: matter.id,
      userId: second.userId,
      reason: REASON,
    });
    await holdMatter(tx, { matterId: matter.id, reason: "Litigation hold" });
  });
  const member = await harness.connect(ws.member);
  const stored = await remember(member, {
    kind: "observation",
    origin: "stated",
    body: SECRET,
    subject_type: "client",
    subject_id: "Jean Dupont",
    matter: REF,
  });
  expect(stored.structured?.outcome).toBe("created");
  for (const [key, userId] of [
    ["teamManager", ws.manager.userId],
    ["screenedManager", second.userId],
  ] as const) {
    tokens[key] = (
      await createApiToken(db.owner.db, {
        organizationId: ws.organizationId,
        userId,
        scopes: ["admin"],
        expiresAt: null,
      })
    ).token;
  }
  server = await startTestConsole(db);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await harness?.close();
  await db?.drop();
});

const mainText = async (page: Page) => (await page.textContent("main")) ?? "";

async function matterPageAs(token: string): Promise<Page> {
  const page = await signedIn(browser, server.base, token);
  await page.goto(`${server.base}/admin/matters`);
  await follow(page, `main a:has-text("${REF}")`);
  return page;
}

describe("the console's matters", () => {
  it("lists the matters with access, team size, screens, hold and the memories this manager may see", async () => {
    const page = await signedIn(browser, server.base, tokens.teamManager);
    await page.goto(`${server.base}/admin/matters`);
    const cells = await page
      .locator("main table tbody tr td")
      .evaluateAll((tds) => tds.map((td) => td.textContent?.trim() ?? ""));
    expect(cells).toEqual([
      REF,
      "Dupont v. Martin",
      "Jean Dupont",
      "Restricted",
      "3",
      "1",
      expect.stringContaining("Legal hold"),
      "1",
    ]);
  });

  it("shows a matter's team, screens with reasons, hold and its memories to a manager on the team", async () => {
    const page = await matterPageAs(tokens.teamManager);
    const text = await mainText(page);
    expect(text).toContain("screened.manager@matters.test");
    expect(text).toContain(REASON);
    expect(text).toContain("Litigation hold");
    expect(text).toContain(SECRET);
  });

  it("shows a screened manager the matter, and none of its memories", async () => {
    const page = await matterPageAs(tokens.screenedManager);
    const text = await mainText(page);
    expect(text).toContain("You are screened from this matter");
    expect(text).not.toContain(SECRET);
    const list = await signedIn(browser, server.base, tokens.screenedManager);
    await list.goto(`${server.base}/admin/matters`);
    const memories = await list.locator('main td[data-label="Memories"]').textContent();
    expect(memories?.trim()).toBe("0");
  });

  it("lists a member's matters and screens on their page", async () => {
    const page = await signedIn(browser, server.base, tokens.teamManager);
    await page.goto(`${server.base}/admin/members/${screenedManager.userId}`);
    const text = await mainText(page);
    expect(text).toMatch(/Screened from/);
    expect(text).toContain(REF);
    expect(text).toContain(REASON);
  });
});
