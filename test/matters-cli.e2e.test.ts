import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { addMember } from "@north/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { TEST_AUDIT_KEY } from "./support/mcp.ts";
import { north, northJson } from "./support/processes.ts";

/**
 * `north matter …` (SPEC §5a, env) as an operator runs it: each command with `--json` in the shapes
 * SPEC names, one clear line and a non-zero exit for bad input with nothing changed, an import
 * that is all or nothing, idempotent and names unknown emails, and an audit row per change.
 */

let db: TestDatabase;
let ws: Workspace;
let env: Record<string, string>;
let lateral: { userId: string };
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  ws = await createWorkspace(db.owner.db, "Cabinet");
  lateral = await addMember(db.owner.db, {
    organizationId: ws.organizationId,
    email: "Lateral@Cabinet.test",
  });
  env = { DATABASE_URL: db.ownerUrl, NORTH_AUDIT_KEY: TEST_AUDIT_KEY };
  dir = await mkdtemp(path.join(tmpdir(), "north-matters-"));
});
afterAll(async () => {
  await db?.drop();
});

const org = () => ["--org", ws.organizationId];
const matterRows = async () =>
  db.owner.client<{ reference: string }[]>`
    select reference from matters where organization_id = ${ws.organizationId} order by reference`;
const auditOf = (tool: string) =>
  db.owner.client<{ outcome: string; reason: string | null; fingerprinted: boolean }[]>`
    select outcome, reason, target_fingerprint is not null as fingerprinted
    from audit_events where organization_id = ${ws.organizationId} and tool = ${tool}
    order by occurred_at`;

describe("north matter", () => {
  it("creates a matter, shows it with team, screens and hold, and lists it", async () => {
    const created = await northJson(
      [
        "matter",
        "create",
        ...org(),
        "--ref",
        "2026/0042",
        "--name",
        "Dupont v. Martin",
        "--client",
        "Jean Dupont",
        "--restricted",
      ],
      env,
    );
    expect(created).toMatchObject({ reference: "2026/0042", access: "restricted", hold: null });
    await northJson(
      ["matter", "team", "add", ...org(), "--ref", "2026/0042", "--user", ws.member.userId],
      env,
    );
    await northJson(
      [
        "matter",
        "screen",
        "add",
        ...org(),
        "--ref",
        "2026/0042",
        "--user",
        lateral.userId,
        "--reason",
        "Acted for Martin at her former firm",
      ],
      env,
    );
    await northJson(
      ["matter", "hold", ...org(), "--ref", "2026/0042", "--reason", "Litigation hold"],
      env,
    );
    const shown = await northJson(["matter", "show", ...org(), "--ref", "2026/0042"], env);
    expect(shown).toEqual({
      reference: "2026/0042",
      name: "Dupont v. Martin",
      client: "Jean Dupont",
      access: "restricted",
      team: [{ user_id: ws.member.userId, email: expect.stringContaining("member") }],
      screens: [
        {
          user_id: lateral.userId,
          email: "Lateral@Cabinet.test",
          reason: "Acted for Martin at her former firm",
        },
      ],
      hold: { reason: "Litigation hold", since: expect.any(String) },
      memories: 0,
    });
    const listed = await northJson<{ matters: Record<string, unknown>[] }>(
      ["matter", "list", ...org()],
      env,
    );
    expect(listed.matters).toEqual([
      expect.objectContaining({ reference: "2026/0042", team: 1, screens: 1, memories: 0 }),
    ]);
    const released = await northJson(["matter", "release", ...org(), "--ref", "2026/0042"], env);
    expect(released).toEqual({ reference: "2026/0042", released: true });
    expect(await auditOf("matter_create")).toEqual([
      { outcome: "created", reason: null, fingerprinted: true },
    ]);
    expect((await auditOf("matter_hold")).map((r) => r.reason)).toEqual(["held", "released"]);
    expect((await auditOf("matter_screen")).map((r) => r.reason)).toEqual(["added"]);
    const ledger = JSON.stringify(
      await db.owner
        .client`select * from audit_events where organization_id = ${ws.organizationId}`,
    );
    for (const secret of ["2026/0042", "Dupont", "Martin", "Litigation hold"]) {
      expect(ledger).not.toContain(secret);
    }
  });

  it.each([
    [["--ref", "bad ref!", "--name", "N"], /reference must be 1–64 characters/],
    [["--ref", "x".repeat(65), "--name", "N"], /reference must be 1–64 characters/],
    [["--ref", "2026/0042", "--name", "N"], /already exists/],
    [["--ref", "OK-1", "--name", ""], /name must be 1–200 characters/],
    [["--ref", "OK-1"], /--name is required/],
  ])("refuses matter create %j in one line, changing nothing", async (args, message) => {
    const before = await matterRows();
    const result = await north(["matter", "create", ...org(), ...args], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(await matterRows()).toEqual(before);
  });

  it("refuses a team or screen change for a non-member, and a hold on an unknown matter", async () => {
    const other = await createWorkspace(db.owner.db, "Other");
    for (const args of [
      ["matter", "team", "add", ...org(), "--ref", "2026/0042", "--user", other.member.userId],
      [
        "matter",
        "screen",
        "add",
        ...org(),
        "--ref",
        "2026/0042",
        "--user",
        other.member.userId,
        "--reason",
        "r",
      ],
    ]) {
      const result = await north(args, env);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/not a member of that organization; nothing was changed/);
    }
    const hold = await north(
      ["matter", "hold", ...org(), "--ref", "NOPE-1", "--reason", "Hold"],
      env,
    );
    expect(hold.code).not.toBe(0);
    expect(hold.stderr.trim().split("\n")).toHaveLength(1);
    expect(hold.stderr).toMatch(/no matter has that reference/);
    const [count] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from matter_team t join matters m on m.id = t.matter_id
      where m.organization_id = ${ws.organizationId}`;
    expect(count?.n).toBe(1);
  });
});

describe("north matter import", () => {
  const write = async (name: string, document: unknown) => {
    const file = path.join(dir, name);
    await writeFile(file, JSON.stringify(document));
    return file;
  };
  const conflicts = (screenedEmail: string) => ({
    matters: [
      {
        reference: "IMP-1",
        name: "Imported open",
        access: "open",
        team: [],
        screened: [{ email: screenedEmail, reason: "Ethical wall" }],
      },
      {
        reference: "IMP-2",
        name: "Imported restricted",
        client: "Acme SAS",
        access: "restricted",
        team: ["LATERAL@cabinet.test"],
        screened: [],
      },
    ],
  });

  it("refuses a file naming a stranger, naming the email, and imports nothing", async () => {
    const file = await write("stranger.json", conflicts("stranger@elsewhere.test"));
    const before = await matterRows();
    const result = await north(["matter", "import", ...org(), "--file", file], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("stranger@elsewhere.test");
    expect(await matterRows()).toEqual(before);
  });

  it("imports all of it, then changes nothing on a second run", async () => {
    const file = await write("ok.json", conflicts("lateral@cabinet.test"));
    const first = await northJson(["matter", "import", ...org(), "--file", file], env);
    expect(first).toEqual({ matters: 2, created: 2, updated: 0, unchanged: 0 });
    const second = await northJson(["matter", "import", ...org(), "--file", file], env);
    expect(second).toEqual({ matters: 2, created: 0, updated: 0, unchanged: 2 });
    const shown = await northJson<{ team: unknown[]; screens: unknown[] }>(
      ["matter", "show", ...org(), "--ref", "imp-2"],
      env,
    );
    expect(shown.team).toEqual([{ user_id: lateral.userId, email: "Lateral@Cabinet.test" }]);
    const open = await northJson<{ screens: { user_id: string }[] }>(
      ["matter", "show", ...org(), "--ref", "IMP-1"],
      env,
    );
    expect(open.screens.map((s) => s.user_id)).toEqual([lateral.userId]);
    // References are one per organisation whatever their case.
    const again = await north(["matter", "create", ...org(), "--ref", "imp-1", "--name", "N"], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already exists/);
  });

  it("refuses a file with a bad reference or a reference twice, importing nothing", async () => {
    const before = await matterRows();
    for (const [document, why] of [
      [
        { matters: [{ reference: "bad ref", name: "N", access: "open" }] },
        /matters\[0\]: the reference must be/,
      ],
      [
        {
          matters: [
            { reference: "DUP-1", name: "N", access: "open" },
            { reference: "dup-1", name: "N", access: "open" },
          ],
        },
        /matters\[1\]: its reference appears twice/,
      ],
    ] as const) {
      const file = await write("bad.json", document);
      const result = await north(["matter", "import", ...org(), "--file", file], env);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(why);
    }
    expect(await matterRows()).toEqual(before);
  });
});
