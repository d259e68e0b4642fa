import { AxeBuilder } from "@axe-core/playwright";
import {
  addMember,
  addScreen,
  createApiToken,
  createMatter,
  createOrganization,
  type Tenant,
  withOrganization,
} from "@north/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspaceOverMcp } from "../scripts/console-seed.ts";
import { follow, launchChromium, signedIn } from "./support/console.ts";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { type SignInServer, startSignInServer } from "./support/sign-in.ts";

/**
 * Every console page at a laptop's and a phone's width (issue 12): the page itself never
 * scrolls sideways, and axe-core finds no serious or critical accessibility violation.
 */
const VIEWPORTS = [
  { name: "laptop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

let db: TestDatabase;
let server: SignInServer;
let browser: Browser;
let managerToken: string;
let quiet: Tenant;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startSignInServer(db);
  browser = await launchChromium();
  const org = await createOrganization(db.owner.db, { name: "Cabinet Lefèvre & Associés" });
  const manager = await addMember(db.owner.db, {
    organizationId: org.id,
    email: "claire.lefevre@cabinet-lefevre.example",
    role: "manager",
  });
  const associate = await addMember(db.owner.db, {
    organizationId: org.id,
    email: "a.martin-des-longues-prairies@cabinet-lefevre.example",
  });
  quiet = await addMember(db.owner.db, {
    organizationId: org.id,
    email: "not.yet.onboarded@cabinet-lefevre.example",
  });
  const scopes = ["profile:write", "memory:read", "memory:write"];
  managerToken = (
    await createApiToken(db.owner.db, {
      organizationId: org.id,
      userId: manager.userId,
      scopes: [...scopes, "admin"],
      expiresAt: null,
    })
  ).token;
  const associateToken = (
    await createApiToken(db.owner.db, {
      organizationId: org.id,
      userId: associate.userId,
      scopes,
      expiresAt: null,
    })
  ).token;
  // A matter with a long client name and a screen, for the Matters pages (SPEC §5a).
  await withOrganization(db.owner.db, org.id, async (tx) => {
    const matter = await createMatter(tx, {
      organizationId: org.id,
      reference: "2026/0042-LONG.REFERENCE_WITH-SEVERAL/PARTS",
      name: "Société Générale de Construction et de Travaux Publics v. Martin",
      client: "Société Générale de Construction et de Travaux Publics du Grand Est",
      access: "restricted",
    });
    await addScreen(tx, {
      organizationId: org.id,
      matterId: matter.id,
      userId: associate.userId,
      reason: "Acted for the other side at her former firm, until March 2026",
    });
  });
  await seedWorkspaceOverMcp(`${server.base}/mcp`, [
    { email: "claire", token: managerToken },
    { email: "associate", token: associateToken },
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.drop();
});

// CSP stays on for the pages; axe's script is evaluated by Playwright, which CSP does not see.
const signedInPage = (width: number, height: number): Promise<Page> =>
  signedIn(browser, server.base, managerToken, { width, height });

/** The pages a manager reaches by following links (POST results are checked in their suites). */
const pages = () => [
  "/admin/members",
  `/admin/members/${quiet.userId}`,
  "/admin/profiles",
  "/admin/memories",
  "/admin/matters",
  `/admin/matters/${encodeURIComponent("2026/0042-LONG.REFERENCE_WITH-SEVERAL/PARTS")}`,
  "/admin/connections",
  "/admin/audit",
  "/admin/no-such-page",
];

async function check(page: Page, label: string, width: number) {
  const scrollWidth = Number(await page.evaluate("document.documentElement.scrollWidth"));
  expect(scrollWidth, `${label}: the page scrolls sideways`).toBeLessThanOrEqual(width);
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(serious, `${label}: axe`).toEqual([]);
}

describe.each(VIEWPORTS)("the console at $width × $height ($name)", ({ name, width, height }) => {
  it("fits the width and passes axe on every page", async () => {
    const page = await signedInPage(width, height);
    for (const path of pages()) {
      await page.goto(`${server.base}${path}`);
      await check(page, path, width);
    }
  });

  it("fits the width and passes axe on the pages reached by forms", async () => {
    const page = await signedInPage(width, height);
    // Every member's page, followed from the list: the list's order is not the test's to
    // choose, and the long address (a.martin-des-longues-prairies@…) must wrap on a phone.
    await page.goto(`${server.base}/admin/members`);
    const members = await page.locator("main table a").count();
    expect(members).toBe(3);
    for (let i = 0; i < members; i++) {
      await page.goto(`${server.base}/admin/members`);
      const link = page.locator("main table a").nth(i);
      const email = (await link.textContent()) ?? "";
      await follow(page, link);
      await check(page, `${email}'s page (followed from the list)`, width);
    }
    await page.goto(`${server.base}/admin/memories`);
    await follow(page, 'main form[action="/admin/memories"] button[aria-label^="Review"]');
    await check(page, "a subject's review", width);
    await page.goto(`${server.base}/admin/audit?outcome=read`);
    await check(page, "a filtered audit page", width);
  });

  it("fits the width and passes axe on the sign-in pages", async () => {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    await page.goto(`${server.base}/sign-in?client_id=x&scope=memory%3Aread`);
    await check(page, "/sign-in", width);
  });

  it("fits the width and passes axe on the console's sign-in page", async () => {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    await page.goto(`${server.base}/admin/login`);
    await check(page, "/admin/login", width);
  });

  it("keeps Sign out reachable inside the viewport", async () => {
    const page = await signedInPage(width, height);
    await page.goto(`${server.base}/admin/members`);
    const box = await page.locator('form[action="/admin/logout"] button').boundingBox();
    expect(box).not.toBeNull();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(width);
  });
  it("erases through the confirmation page and shows the tombstones", async () => {
    const page = await signedInPage(width, height);
    await page.goto(`${server.base}/admin/memories`);
    // A whole subject on the laptop, one memory on the phone (each viewport has its own).
    const subject = name === "laptop" ? "client" : "person";
    await follow(
      page,
      `main form[action="/admin/memories"] button[aria-label^="Review ${subject}"]`,
    );
    const erase =
      name === "laptop"
        ? "button[data-erase-all]"
        : 'table[data-memories] button[aria-label^="Erase the"]';
    await follow(page, erase);
    const confirmation = (await page.textContent("main")) ?? "";
    expect(confirmation).toMatch(name === "laptop" ? /2 memories held about client/ : /Erase/);
    await check(page, "the erasure confirmation", width);
    await follow(page, 'button:has-text("Yes, erase")');
    expect(new URL(page.url()).search).toBe(name === "laptop" ? "?erased=2" : "?erased=1");
    expect(await page.textContent('[role="status"]')).toMatch(/erased/i);
    await check(page, "after erasing", width);
    // The subject holds no live memory any more, so it left the list: search for it (other
    // case and accents), as a manager answering an access request would.
    await page.fill('input[name="subject_id"]', name === "laptop" ? "acme sas" : "helene dubois");
    await follow(page, 'main form[action="/admin/memories"] button:has-text("Search")');
    expect(await page.locator('tr[data-state="forgotten"]').count()).toBe(
      name === "laptop" ? 2 : 1,
    );
    expect(await page.textContent("main")).toContain("body removed");
    await check(page, "tombstones", width);
  });
});
