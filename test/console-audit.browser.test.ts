import { randomUUID } from "node:crypto";
import { READ_TOOL, RECALL_TOOL, REMEMBER_TOOL } from "@north/agent-runtime";
import {
  addMember,
  createApiToken,
  createFingerprinter,
  readAuditPageForAdmin,
  type Tenant,
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
import { TEST_AUDIT_KEY } from "./support/mcp.ts";
import { north, northJson } from "./support/processes.ts";

/**
 * The console's Audit section (SPEC §8, issue 12): every event kind recorded, filters by member,
 * event, outcome and date that return exactly the matching rows, and keyset paging that walks
 * the ledger without duplicates or gaps, in a real headless Chromium against the real server.
 */

interface Seeded {
  id: string;
  organizationId: string;
  actorId: string | null;
  tool: string;
  outcome: string;
  /** PostgreSQL timestamptz text, microseconds included. */
  at: string;
}

let db: TestDatabase;
let ws: Workspace;
let other: Workspace;
/** A member who appears only in seeded rows (never in this suite's live events). */
let seededMember: Tenant;
let server: TestConsole;
let browser: Browser;
let base: string;
const tokens = { manager: "", managerId: "", member: "" };
const seeded: Seeded[] = [];
const fingerprint = createFingerprinter(TEST_AUDIT_KEY);

/** Newest first, ties broken by id: the ledger's order (every seeded time has one format). */
const newestFirst = (rows: readonly Seeded[]) =>
  [...rows]
    .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
    .map((r) => r.id);

async function seed(rows: Omit<Seeded, "id">[]): Promise<void> {
  for (const row of rows) {
    const id = randomUUID();
    await db.owner.client`
      insert into audit_events (id, occurred_at, organization_id, actor_id, tool, outcome)
      values (${id}, ${row.at}::timestamptz, ${row.organizationId}, ${row.actorId}, ${row.tool}, ${row.outcome})`;
    seeded.push({ id, ...row });
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Audit");
  other = await createWorkspace(db.owner.db, "Elsewhere");
  const added = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: "seeded.associate@audit.example",
  });
  seededMember = { organizationId: ws.organizationId, userId: added.userId };

  // Filter rows: March 2024, three actors, three tools, three outcomes, five days.
  const actors = [seededMember.userId, ws.member.userId, null];
  const tools = [REMEMBER_TOOL, READ_TOOL, "sign_in"];
  const outcomes = ["conflict", "read", "refused"];
  await seed(
    Array.from({ length: 60 }, (_, i) => ({
      organizationId: ws.organizationId,
      actorId: actors[i % 3] ?? null,
      tool: tools[Math.floor(i / 3) % 3] ?? READ_TOOL,
      outcome: outcomes[Math.floor(i / 9) % 3] ?? "read",
      at: `2024-03-0${(i % 5) + 1} ${String(8 + (i % 7)).padStart(2, "0")}:00:00.${String(i).padStart(6, "0")}+00`,
    })),
  );
  // Paging rows: 120 recalls in January 2024, three to a timestamp (the id breaks the tie),
  // and microseconds apart from one timestamp to the next (a millisecond cursor would skip).
  await seed(
    Array.from({ length: 120 }, (_, i) => ({
      organizationId: ws.organizationId,
      actorId: ws.member.userId,
      tool: RECALL_TOOL,
      outcome: "read",
      at: `2024-01-15 10:00:00.${String(Math.floor(i / 3)).padStart(6, "0")}+00`,
    })),
  );
  // Another organisation's rows, shaped to match every filter above.
  await seed(
    Array.from({ length: 12 }, (_, i) => ({
      organizationId: other.organizationId,
      actorId: other.member.userId,
      tool: [REMEMBER_TOOL, RECALL_TOOL][i % 2] ?? RECALL_TOOL,
      outcome: ["conflict", "read"][i % 2] ?? "read",
      at: `2024-0${(i % 3) + 1}-15 10:00:00.000001+00`,
    })),
  );

  const mint = async (userId: string) =>
    createApiToken(db.owner.db, {
      organizationId: ws.organizationId,
      userId,
      scopes: ["admin"],
      expiresAt: null,
    });
  const managerToken = await mint(ws.manager.userId);
  tokens.manager = managerToken.token;
  tokens.managerId = managerToken.id;
  tokens.member = (await mint(ws.member.userId)).token;

  server = await startTestConsole(db);
  base = server.base;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await db?.drop();
});

const signedIn = (): Promise<Page> => signedInWith(browser, base, tokens.manager);

/** The event ids the page shows, in order. */
const shownIds = async (page: Page) =>
  Promise.all(
    (await page.locator("tbody tr[data-event-id]").all()).map(
      async (row) => (await row.getAttribute("data-event-id")) ?? "",
    ),
  );

async function show(page: Page, query: Record<string, string>): Promise<string[]> {
  const response = await page.goto(`${base}/admin/audit?${new URLSearchParams(query)}`);
  expect(response?.status()).toBe(200);
  return shownIds(page);
}

const inWs = (r: Seeded) => r.organizationId === ws.organizationId;

describe("the console's audit filters", () => {
  it("filters by member, chosen by email from the organisation's members only", async () => {
    const page = await signedIn();
    await page.goto(`${base}/admin/audit`);
    const options = page.locator('select[name="member"] option');
    expect(await options.allTextContents()).toContain("seeded.associate@audit.example");
    const values = await Promise.all((await options.all()).map((o) => o.getAttribute("value")));
    expect(values).toContain(ws.member.userId);
    expect(values).not.toContain(other.member.userId);
    expect(values).not.toContain(other.manager.userId);
    await page.selectOption('select[name="member"]', { label: "seeded.associate@audit.example" });
    await follow(page, "form.filters button");
    expect(new URL(page.url()).searchParams.get("member")).toBe(seededMember.userId);
    const expected = newestFirst(
      seeded.filter((r) => inWs(r) && r.actorId === seededMember.userId),
    );
    expect(expected).toHaveLength(20);
    expect(await shownIds(page)).toEqual(expected);
    const who = await page.locator('tbody td[data-label="Who"]').allTextContents();
    expect(new Set(who)).toEqual(new Set(["seeded.associate@audit.example"]));
  });

  it("filters by event kind and by outcome", async () => {
    const page = await signedIn();
    const remember = newestFirst(seeded.filter((r) => inWs(r) && r.tool === REMEMBER_TOOL));
    expect(await show(page, { tool: REMEMBER_TOOL })).toEqual(remember);
    const conflicts = newestFirst(seeded.filter((r) => inWs(r) && r.outcome === "conflict"));
    expect(await show(page, { outcome: "conflict" })).toEqual(conflicts);
    expect(remember.length).toBeGreaterThan(0);
    expect(conflicts.length).toBeGreaterThan(0);
  });

  it("filters by date, both ends inclusive, in UTC", async () => {
    const page = await signedIn();
    const days = ["2024-03-02", "2024-03-03", "2024-03-04"];
    const expected = newestFirst(seeded.filter((r) => inWs(r) && days.includes(r.at.slice(0, 10))));
    expect(expected).toHaveLength(36);
    expect(await show(page, { from: "2024-03-02", to: "2024-03-04" })).toEqual(expected);
    expect(await page.inputValue('input[name="from"]')).toBe("2024-03-02");
    // Open ends: from a day on, and up to a day (the 120 January rows are older than March).
    const fromFourth = newestFirst(
      seeded.filter((r) => inWs(r) && r.tool === READ_TOOL && r.at >= "2024-03-04"),
    );
    expect(await show(page, { tool: READ_TOOL, from: "2024-03-04" })).toEqual(fromFourth);
    const upToFirst = newestFirst(
      seeded.filter((r) => inWs(r) && r.tool === REMEMBER_TOOL && r.at < "2024-03-02"),
    );
    expect(upToFirst.length).toBeGreaterThan(0);
    expect(await show(page, { tool: REMEMBER_TOOL, to: "2024-03-01" })).toEqual(upToFirst);
  });

  it("combines filters", async () => {
    const page = await signedIn();
    const expected = newestFirst(
      seeded.filter(
        (r) =>
          inWs(r) &&
          r.actorId === ws.member.userId &&
          r.tool === READ_TOOL &&
          r.outcome === "read" &&
          r.at >= "2024-03-01" &&
          r.at < "2024-03-04",
      ),
    );
    expect(expected).toHaveLength(1);
    const combined = { member: ws.member.userId, tool: READ_TOOL, outcome: "read" };
    expect(await show(page, { ...combined, from: "2024-03-01", to: "2024-03-03" })).toEqual(
      expected,
    );
    // Without the dates, a second row (4 March) matches too.
    expect(await show(page, combined)).toHaveLength(2);
  });

  it("says so when nothing matches, and refuses a malformed filter in words", async () => {
    const page = await signedIn();
    expect(await show(page, { tool: "north_purge", from: "2024-03-01", to: "2024-03-05" })).toEqual(
      [],
    );
    expect(await page.textContent("main")).toContain("No events match these filters.");
    const bad = await page.goto(`${base}/admin/audit?from=2024-02-30`);
    expect(bad?.status()).toBe(400);
    expect(await page.textContent("main")).toContain("Dates must be YYYY-MM-DD");
    const badCursor = await page.goto(`${base}/admin/audit?before=yesterday`);
    expect(badCursor?.status()).toBe(400);
  });

  it("labels every control and reflows its table cells", async () => {
    const page = await signedIn();
    await show(page, { tool: REMEMBER_TOOL });
    const labels = {
      Member: "member",
      Event: "tool",
      Outcome: "outcome",
      "From (UTC)": "from",
      "To (UTC, inclusive)": "to",
    };
    for (const [label, name] of Object.entries(labels)) {
      const text = await page.locator(`form.filters label:has([name="${name}"])`).textContent();
      expect(text?.trim().startsWith(label)).toBe(true);
    }
    expect(await page.locator("div.table-wrap > table").count()).toBe(1);
    const unlabelled = await page.locator("tbody td:not([data-label])").count();
    expect(unlabelled).toBe(0);
  });
});

describe("the console's audit paging", () => {
  it("walks 120 rows in three pages of at most 50, newest first, without duplicates or gaps, and back", async () => {
    const page = await signedIn();
    const expected = newestFirst(seeded.filter((r) => inWs(r) && r.tool === RECALL_TOOL));
    expect(expected).toHaveLength(120);
    const pages: string[][] = [await show(page, { tool: RECALL_TOOL })];
    expect(await page.locator('a:text-is("Newer")').count()).toBe(0);
    await page.screenshot({ path: "/tmp/north-admin-audit-paged.png", fullPage: false });
    while (await page.locator('a[rel="next"]').count()) {
      await follow(page, 'a[rel="next"]');
      expect(new URL(page.url()).searchParams.get("tool")).toBe(RECALL_TOOL);
      pages.push(await shownIds(page));
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    expect(pages.flat()).toEqual(expected);

    for (const previous of [pages[1], pages[0]]) {
      await follow(page, 'a[rel="prev"]');
      expect(await shownIds(page)).toEqual(previous);
    }
    expect(await page.locator('a[rel="prev"]').count()).toBe(0);
  });

  it("pages the same way through the store, and a filter on the last row's cursor finds nothing older", async () => {
    const request = { organizationId: ws.organizationId, requesterId: ws.manager.userId };
    const walked: string[] = [];
    let before: Parameters<typeof readAuditPageForAdmin>[1]["before"];
    for (let i = 0; i < 4; i++) {
      const page = await withTenant(db.app.db, ws.manager, (tx) =>
        readAuditPageForAdmin(tx, { ...request, tool: RECALL_TOOL, before, size: 50 }),
      );
      if (!page.ok) throw new Error("refused");
      walked.push(...page.events.map((e) => e.id));
      if (!page.older) break;
      before = page.older;
    }
    expect(walked).toEqual(newestFirst(seeded.filter((r) => inWs(r) && r.tool === RECALL_TOOL)));
  });
});

describe("the console's audit boundaries", () => {
  it("never shows another organisation's rows, even filtered on that organisation's member", async () => {
    const page = await signedIn();
    const foreign = new Set(seeded.filter((r) => !inWs(r)).map((r) => r.id));
    const shown = [
      ...(await show(page, {})),
      ...(await show(page, { tool: RECALL_TOOL })),
      ...(await show(page, { tool: REMEMBER_TOOL, outcome: "conflict" })),
      ...(await show(page, { from: "2024-01-01", to: "2024-03-31" })),
      ...(await show(page, { member: other.member.userId })),
    ];
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.filter((id) => foreign.has(id))).toEqual([]);
    expect(await show(page, { member: other.member.userId })).toEqual([]);
  });

  it("refuses an ordinary member: no session, and the store says no", async () => {
    const page = await signedInWith(browser, base, tokens.member);
    expect(await page.textContent("main")).toContain("This console is for workspace managers");
    const response = await page.goto(`${base}/admin/audit`);
    expect(new URL(page.url()).pathname).toBe("/admin/login");
    expect(response?.status()).toBe(200);
    const refused = await withTenant(db.app.db, ws.member, (tx) =>
      readAuditPageForAdmin(tx, {
        organizationId: ws.organizationId,
        requesterId: ws.member.userId,
        size: 50,
      }),
    );
    expect(refused).toEqual({ ok: false });
    const [row] = await db.owner.client`
      select actor_id, outcome, reason from audit_events
      where tool = 'admin_sign_in' and organization_id = ${ws.organizationId} and outcome = 'refused'`;
    expect(row).toEqual({ actor_id: ws.member.userId, outcome: "refused", reason: "not_manager" });
  });
});

describe("events the ledger records beyond tool calls", () => {
  /** Every column of the organisation's rows of `tool`, as JSON text, oldest first. */
  const rowsOf = async (tool: string) =>
    db.owner.client<{ actor_id: string | null; json: string }[]>`
      select actor_id, row_to_json(e)::text as json from audit_events e
      where organization_id = ${ws.organizationId} and tool = ${tool}
      order by occurred_at, id`;

  it("records a console sign-out in the manager's name", async () => {
    const page = await signedIn();
    await Promise.all([
      page.waitForURL(`${base}/admin/login`),
      page.click('form[action="/admin/logout"] button'),
    ]);
    const [row] = await db.owner.client`
      select actor_id, token_id, outcome, reason from audit_events
      where organization_id = ${ws.organizationId} and tool = 'admin_sign_out'`;
    expect(row).toEqual({
      actor_id: ws.manager.userId,
      token_id: tokens.managerId,
      outcome: "revoked",
      reason: null,
    });
  });

  it("records the operator's member and token changes with no actor, the member only as a fingerprint", async () => {
    const env = { DATABASE_URL: db.ownerUrl, NORTH_AUDIT_KEY: TEST_AUDIT_KEY };
    const email = "Nouvelle.Associee@Audit.example";
    const org = ws.organizationId;
    const { userId } = await northJson<{ userId: string }>(
      ["member", "add", "--org", org, "--email", email],
      env,
    );
    await northJson(["member", "role", "--org", org, "--user", userId, "--role", "manager"], env);
    const token = await northJson<{ id: string }>(
      ["token", "create", "--org", org, "--user", userId, "--scope", "admin"],
      env,
    );
    await northJson(["token", "revoke", token.id], env);
    await northJson(["token", "revoke", token.id], env);
    const admin = await northJson<{ id: string }>(
      ["token", "create", "--org", org, "--user", userId, "--scope", "admin"],
      env,
    );
    await northJson(["member", "role", "--org", org, "--user", userId, "--role", "member"], env);
    await northJson(["member", "remove", "--org", org, "--user", userId], env);
    // Without NORTH_AUDIT_KEY the row is still written, with no target.
    const reinstated = await northJson<{ reinstated: boolean }>(
      ["member", "add", "--org", org, "--email", email.toLowerCase()],
      { DATABASE_URL: db.ownerUrl },
    );
    expect(reinstated.reinstated).toBe(true);
    await northJson(["member", "remove", "--org", org, "--user", userId], env);
    // A failed command changes nothing and records nothing.
    const again = await north(["member", "remove", "--org", org, "--user", userId], env);
    expect(again).toMatchObject({ code: 2, stderr: expect.stringContaining("no active member") });

    const target = fingerprint(userId).fingerprint;
    const pick = (json: string) => {
      const row = JSON.parse(json);
      return [row.outcome, row.reason, row.target_fingerprint, row.token_id, row.affected];
    };
    const expectRows = async (tool: string, expected: unknown[][]) => {
      const rows = await rowsOf(tool);
      for (const row of rows) {
        expect(row.actor_id).toBeNull();
        expect(row.json.toLowerCase()).not.toContain(email.toLowerCase());
        expect(row.json).not.toContain("@");
      }
      expect(rows.map((r) => pick(r.json))).toEqual(expected);
    };
    await expectRows("member_add", [
      ["created", null, target, null, null],
      ["created", "reinstated", null, null, null],
    ]);
    await expectRows("member_role", [
      ["updated", "manager", target, null, 0],
      ["updated", "member", target, null, 1],
    ]);
    await expectRows("token_create", [
      ["created", null, target, token.id, null],
      ["created", null, target, admin.id, null],
    ]);
    await expectRows("token_revoke", [
      ["revoked", "operator", target, token.id, null],
      ["noop", "operator", target, token.id, null],
    ]);
    // One row per remove that changed something: the third found nobody active.
    await expectRows("member_remove", [
      ["revoked", "operator", target, null, 0],
      ["revoked", "operator", target, null, 0],
    ]);

    // The console shows them as the operator's, with the fingerprint cut short.
    const page = await signedIn();
    await show(page, { tool: "member_role" });
    const who = await page.locator('tbody td[data-label="Who"]').allTextContents();
    expect(who).toEqual(["operator", "operator"]);
    const shownTarget = await page.locator('tbody td[data-label="Target"]').first().textContent();
    expect(shownTarget).toContain(target.slice(0, 12));
    expect(shownTarget).not.toContain(target.slice(0, 13));
    expect(shownTarget).toContain(`(${userId.length} chars)`);
    expect(await page.locator('tbody td[data-label="Reason"]').allTextContents()).toEqual([
      "member",
      "manager",
    ]);
  }, 120_000);
});
