import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  addMember,
  addScreen,
  addToTeam,
  createMatter,
  holdMatter,
  reviewMemories,
  type Tenant,
  withOrganization,
  withTenant,
} from "@north/db";
import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { useTestApp } from "./support/mcp.ts";
import { briefing, call, forget, held, recall, remember } from "./support/memory-tools.ts";

/**
 * SPEC §5a through the tools, against the real app: a firm with an open and a restricted
 * matter, a team, a screened member and a screened manager. A matter's memories come back only
 * with the matter named and only to those who may see it; a matter nobody may see, a restricted
 * one and a screened one are refused alike (existence never leaks), stored nothing and audited;
 * held counts what it withholds; forget erases only what may be seen and keeps what is held.
 */

const { db, harness } = useTestApp();
let firm: Workspace;
let teamMember: Tenant;
let screened: Tenant;
const clients: Record<"member" | "team" | "screened" | "manager", Client> = {} as never;

const RESTRICTED = "2026/0042";
const OPEN = "ACME-7";
const HELD = "LIT-9";

beforeAll(async () => {
  firm = await createWorkspace(db.owner.db, "Walls");
  const added = async (email: string) => {
    const m = await addMember(db.owner.db, { organizationId: firm.organizationId, email });
    return { organizationId: firm.organizationId, userId: m.userId };
  };
  teamMember = await added("team@walls.test");
  screened = await added("screened@walls.test");
  await withOrganization(db.owner.db, firm.organizationId, async (tx) => {
    const organizationId = firm.organizationId;
    const restricted = await createMatter(tx, {
      organizationId,
      reference: RESTRICTED,
      name: "Dupont v. Martin",
      access: "restricted",
    });
    const open = await createMatter(tx, {
      organizationId,
      reference: OPEN,
      name: "Acme",
      access: "open",
    });
    const heldMatter = await createMatter(tx, {
      organizationId,
      reference: HELD,
      name: "Litigation",
      access: "open",
    });
    for (const userId of [teamMember.userId, firm.manager.userId]) {
      await addToTeam(tx, { organizationId, matterId: restricted.id, userId });
    }
    await addScreen(tx, {
      organizationId,
      matterId: restricted.id,
      userId: firm.manager.userId,
      reason: "Conflict",
    });
    await addScreen(tx, {
      organizationId,
      matterId: open.id,
      userId: screened.userId,
      reason: "Lateral hire",
    });
    await holdMatter(tx, { matterId: heldMatter.id, reason: "Litigation hold" });
  });
  clients.member = await harness.connect(firm.member);
  clients.team = await harness.connect(teamMember);
  clients.screened = await harness.connect(screened);
  clients.manager = await harness.connect(firm.manager, {
    scopes: ["profile:write", "memory:read", "memory:write", "admin"],
    role: "manager",
  });
});

const SECRET = "Jean Dupont accepts a settlement up to 2 M€";

describe("matters through the tools (SPEC §5a)", () => {
  it("stores a matter's memory for its team, and it comes back only with the matter named", async () => {
    const stored = await remember(clients.team, {
      kind: "observation",
      body: SECRET,
      origin: "stated",
      subject_type: "client",
      subject_id: "Jean Dupont",
      matter: RESTRICTED,
    });
    expect(stored.structured).toMatchObject({ outcome: "created" });
    await remember(clients.team, {
      kind: "fact",
      body: "Filings at the Lyon court go through RPVA.",
      origin: "stated",
    });
    const firmWide = await recall(clients.team, { query: "settlement" });
    expect(firmWide.structured.block).not.toContain("2 M€");
    const named = await recall(clients.team, { query: "settlement", matter: RESTRICTED });
    expect(named.structured.block).toContain("2 M€");
    // The fence names the line's matter; the metadata too.
    expect(named.structured.block).toContain(`matter "${RESTRICTED}"`);
    expect(named.structured.memories).toEqual([expect.objectContaining({ matter: RESTRICTED })]);
    const brief = await briefing(clients.team, { matter: RESTRICTED });
    expect(brief.text).toContain("2 M€");
    expect((await briefing(clients.team)).text).not.toContain("2 M€");
  });

  it("refuses a restricted matter, a screened one and one that does not exist with the same receipt", async () => {
    const answers = [
      await recall(clients.member, { query: "settlement", matter: RESTRICTED }),
      await recall(clients.manager, { query: "settlement", matter: RESTRICTED }),
      await recall(clients.screened, { query: "anything", matter: OPEN }),
      await recall(clients.member, { query: "settlement", matter: "NO-SUCH-1" }),
      await recall(clients.member, { query: "settlement", matter: "not a reference!" }),
    ];
    for (const answer of answers) {
      expect(answer.isError).toBe(true);
      expect(answer.text).not.toContain("2 M€");
    }
    const texts = new Set(answers.map((a) => a.text));
    expect(texts.size).toBe(1);
    expect([...texts][0]).toMatch(/^rejected: NORTH_MATTER_UNAVAILABLE\. /);
    const [refused] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from audit_events
      where organization_id = ${firm.organizationId} and reason = 'matter_refused'
        and target_fingerprint is not null`;
    expect(refused?.n).toBe(answers.length);
  });

  it("stores nothing in a matter the caller may not see", async () => {
    const refused = await remember(clients.screened, {
      kind: "fact",
      body: "Smuggled into Acme",
      origin: "stated",
      matter: OPEN,
    });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toMatchObject({
      outcome: "rejected",
      code: "NORTH_MATTER_UNAVAILABLE",
      memory_id: null,
    });
    const [row] = await db.owner.client<{ n: number }[]>`
      select count(*)::int as n from memories where body = 'Smuggled into Acme'`;
    expect(row?.n).toBe(0);
  });

  it("held lists each memory's matter and counts what sits in matters the caller may not see", async () => {
    const forTeam = await call(clients.team, "north__memory_held", {
      subject_type: "client",
      subject_id: "Jean Dupont",
    });
    expect(forTeam.structured).toMatchObject({ withheld: 0 });
    expect(forTeam.structured?.memories).toEqual([expect.objectContaining({ matter: RESTRICTED })]);
    const forMember = await call(clients.member, "north__memory_held", {
      subject_type: "client",
      subject_id: "Jean Dupont",
    });
    expect(forMember.structured).toMatchObject({ withheld: 1, memories: [] });
    expect(forMember.text).not.toContain("2 M€");
    expect(forMember.text).toMatch(/1 more about this subject/);
  });

  it("forget erases only what the caller may see, even a manager's erasure across the firm", async () => {
    const erased = await forget(clients.manager, {
      subject_type: "client",
      subject_id: "Jean Dupont",
    });
    expect(erased.structured).toMatchObject({ forgotten: 0 });
    const stillThere = await held(clients.team, "client", "Jean Dupont");
    expect(stillThere.structured.memories).toEqual([
      expect.objectContaining({ body: SECRET, state: "live" }),
    ]);
  });

  it("keeps a held matter's memory through forget, and says so", async () => {
    const stored = await remember(clients.member, {
      kind: "observation",
      body: "Witness statement received on 3 March.",
      origin: "stated",
      subject_type: "person",
      subject_id: "Paul Witness",
      matter: HELD,
    });
    const id = String(stored.structured?.memory_id);
    const receipt = await forget(clients.member, { memory_id: id });
    expect(receipt.structured).toMatchObject({
      forgotten: 0,
      held_back: 1,
      code: "NORTH_LEGAL_HOLD",
    });
    expect(receipt.text).toMatch(/legal hold/);
    const bySubject = await forget(clients.manager, {
      subject_type: "person",
      subject_id: "Paul Witness",
    });
    expect(bySubject.structured).toMatchObject({ forgotten: 0, held_back: 1 });
    const [row] = await db.owner.client<{ body: string | null }[]>`
      select body from memories where id = ${id}`;
    expect(row?.body).toBe("Witness statement received on 3 March.");
  });

  it("lists a held matter's memory past its expiry as live, in held and in the console's review", async () => {
    const stored = await remember(clients.member, {
      kind: "observation",
      body: "Exhibit list filed.",
      origin: "stated",
      subject_type: "person",
      subject_id: "Erin Exhibit",
      matter: HELD,
    });
    const id = String(stored.structured?.memory_id);
    await db.owner
      .client`update memories set expires_at = now() - interval '1 day' where id = ${id}`;
    const listed = await held(clients.member, "person", "Erin Exhibit");
    expect(listed.structured.memories).toEqual([
      expect.objectContaining({ memory_id: id, matter: HELD, state: "live" }),
    ]);
    const review = await withTenant(db.app.db, firm.manager, (tx) =>
      reviewMemories(tx, { organizationId: firm.organizationId, scope: { memoryId: id } }),
    );
    expect(review.memories.map((m) => m.state)).toEqual(["live"]);
  });
});
