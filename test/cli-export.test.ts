import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { TEST_AUDIT_KEY, useTestApp } from "./support/mcp.ts";
import { forget, remember } from "./support/memory-tools.ts";
import { north, northJson } from "./support/processes.ts";
import { saveAnswer } from "./support/tools.ts";

/** `north export` (SPEC §5): a member's working profile and the memories they wrote. */

const { db, harness } = useTestApp();
let ws: Workspace;
let env: Record<string, string>;

interface Exported {
  organization_id: string;
  members: Array<{
    user_id: string;
    email: string;
    working_profile: { question: string; answer: string; version: number }[];
    memories: { memory_id: string; body: string | null; erased_at: string | null }[];
  }>;
}

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
  env = { DATABASE_URL: db.ownerUrl, NORTH_AUDIT_KEY: TEST_AUDIT_KEY };
  const member = await harness.connect(ws.member);
  await saveAnswer(member, { question: "Which courts do you plead before?", answer: "Nanterre." });
  await remember(member, {
    kind: "fact",
    body: "Nanterre's registry opens at 9.",
    origin: "stated",
  });
  const erased = await remember(member, {
    kind: "fact",
    body: "The old fax number still works.",
    origin: "stated",
  });
  await forget(member, { memory_id: String(erased.structured?.memory_id) });
  const manager = await harness.connect(ws.manager);
  await remember(manager, { kind: "fact", body: "Partners meet on Mondays.", origin: "stated" });
});

describe("north export", () => {
  it("writes one member's profile and the memories they wrote, tombstones without a body", async () => {
    const result = await northJson<Exported>(
      ["export", "--org", ws.organizationId, "--user", ws.member.userId],
      env,
    );
    expect(result.organization_id).toBe(ws.organizationId);
    expect(result.members).toHaveLength(1);
    const [member] = result.members;
    expect(member?.working_profile).toEqual([
      expect.objectContaining({
        question: "Which courts do you plead before?",
        answer: "Nanterre.",
      }),
    ]);
    const bodies = member?.memories.map((m) => m.body);
    expect(bodies).toEqual(["Nanterre's registry opens at 9.", null]);
    expect(member?.memories[1]?.erased_at).not.toBeNull();
    expect(JSON.stringify(result)).not.toContain("Partners meet on Mondays.");
    const [audit] = await db.owner.client`
      select outcome, affected, actor_id, target_fingerprint is not null as fingerprinted
      from audit_events where tool = 'export'`;
    expect(audit).toEqual({ outcome: "read", affected: 1, actor_id: null, fingerprinted: true });
  });

  it("writes every member without --user", async () => {
    const result = await northJson<Exported>(["export", "--org", ws.organizationId], env);
    expect(result.members.map((m) => m.user_id).sort()).toEqual(
      [ws.member.userId, ws.manager.userId].sort(),
    );
  });

  it.each([
    [["export"], /--org is required/],
    [["export", "--org", "nope"], /--org must be/],
    [["export", "--org", "00000000-0000-0000-0000-000000000000"], /no such organization/],
  ])("refuses %j in one line", async (args, message) => {
    const result = await north(args, env);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });

  it("refuses a user who is not a member of the organisation", async () => {
    const other = await createWorkspace(db.owner.db, "Other");
    const result = await north(
      ["export", "--org", ws.organizationId, "--user", other.member.userId],
      env,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/not a member of that organization/);
  });
});
