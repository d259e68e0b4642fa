import { beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";
import { useTestApp } from "./support/mcp.ts";
import { forget, held, recall, remember } from "./support/memory-tools.ts";

/** SPEC §5: a newer memory may supersede older ones (issue 13), through the MCP tools. */

const { db, harness } = useTestApp();
let ws: Workspace;

beforeAll(async () => {
  ws = await createWorkspace(db.owner.db);
});

type Receipt = { outcome: string; memory_id: string | null; superseded?: string[]; code?: string };
const receipt = (r: { structured?: Record<string, unknown> }) => r.structured as Receipt;

const counsel = (id: string, body: string, supersedes?: string[]) => ({
  kind: "observation" as const,
  body,
  origin: "stated" as const,
  subject_type: "client",
  subject_id: id,
  ...(supersedes ? { supersedes } : {}),
});

async function count(): Promise<number> {
  const [row] = await db.owner.client<{ n: number }[]>`select count(*)::int as n from memories`;
  return row?.n ?? 0;
}

describe("supersede", () => {
  it("stops recalling the old memory and lists it, with what replaced it, in held", async () => {
    const member = await harness.connect(ws.member);
    const old = receipt(
      await remember(member, counsel("Orion SA", "Orion's counsel is Maître Blanc.")),
    );
    // A colleague corrects it: superseding removes nothing, so any member may.
    const colleague = await harness.connect(ws.manager);
    const fresh = receipt(
      await remember(
        colleague,
        counsel("Orion SA", "Orion's counsel is now Maître Noir.", [String(old.memory_id)]),
      ),
    );
    expect(fresh).toMatchObject({ outcome: "created", superseded: [old.memory_id] });

    const recalled = await recall(member, { subject_type: "client", subject_id: "Orion SA" });
    expect(recalled.structured.memories.map((m) => m.memory_id)).toEqual([fresh.memory_id]);
    expect(recalled.structured.block).not.toContain("Maître Blanc");
    const byWords = await recall(member, { query: "counsel Orion" });
    expect(byWords.structured.memories.map((m) => m.memory_id)).not.toContain(old.memory_id);

    const listed = await held(member, "client", "Orion SA");
    const rows = listed.structured.memories as unknown as Array<{
      memory_id: string;
      state: string;
      superseded_by: string | null;
      body: string | null;
    }>;
    expect(rows.find((m) => m.memory_id === old.memory_id)).toMatchObject({
      state: "superseded",
      superseded_by: fresh.memory_id,
      body: "Orion's counsel is Maître Blanc.",
    });
    expect(rows.find((m) => m.memory_id === fresh.memory_id)).toMatchObject({
      state: "live",
      superseded_by: null,
    });
  });

  it("refuses unknown, foreign, erased, already replaced or malformed ids, storing nothing", async () => {
    const member = await harness.connect(ws.member);
    const other = await createWorkspace(db.owner.db, "Elsewhere");
    const foreign = receipt(
      await remember(await harness.connect(other.member), counsel("Vega", "Vega pays late.")),
    );
    const erased = receipt(await remember(member, counsel("Lyra", "Lyra moved offices.")));
    await forget(member, { memory_id: String(erased.memory_id) });
    const replaced = receipt(await remember(member, counsel("Deneb", "Deneb's CFO is Anne.")));
    await remember(member, counsel("Deneb", "Deneb's CFO is Paul.", [String(replaced.memory_id)]));

    const before = await count();
    for (const supersedes of [
      ["00000000-0000-0000-0000-000000000000"],
      [String(foreign.memory_id)],
      [String(erased.memory_id)],
      [String(replaced.memory_id)],
      ["not-an-id"],
    ]) {
      const result = await remember(
        member,
        counsel("Altair", "Altair signs on Friday.", supersedes),
      );
      expect(result.isError, JSON.stringify(supersedes)).toBe(true);
      expect(receipt(result)).toMatchObject({
        outcome: "rejected",
        code: "NORTH_SUPERSEDES_INVALID",
      });
    }
    expect(await count()).toBe(before);
    // The foreign memory was not touched.
    const [row] = await db.owner.client`
      select superseded_by from memories where id = ${String(foreign.memory_id)}`;
    expect(row).toEqual({ superseded_by: null });
  });
});
