import { connectDatabase, recallMemories, VECTOR_CANDIDATES, withTenant } from "@north/db";
import type { Embedder } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace } from "./support/fixtures.ts";
import { createTestApp, type TestApp } from "./support/mcp.ts";
import { recall, remember } from "./support/memory-tools.ts";

/**
 * Issue 13's hybrid and bounded recall (decision 021): full-text and vector candidates fused,
 * each list bounded, and the full-text search able to use its indexes under row-level security.
 */

/**
 * A deterministic embedder that knows synonyms across languages: each concept is one dimension,
 * every other word adds a little to a shared "other" dimension. "termination" and "licenciement"
 * point the same way although they share no letters, which the full-text search cannot see.
 */
const CONCEPTS: string[][] = [
  ["termination", "dismissal", "licenciement", "fired"],
  ["lease", "bail", "tenancy"],
  ["deadline", "délai", "échéance"],
];
function createConceptEmbedder(): Embedder {
  return {
    async embed(texts) {
      return texts.map((text) => {
        const vector = new Array<number>(CONCEPTS.length + 1).fill(0);
        for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
          const concept = CONCEPTS.findIndex((words) => words.includes(word));
          if (concept >= 0) vector[concept] = (vector[concept] ?? 0) + 1;
          else vector[CONCEPTS.length] = (vector[CONCEPTS.length] ?? 0) + 0.05;
        }
        return vector;
      });
    },
  };
}

let db: TestDatabase;
let withEmbedder: TestApp;
let withoutEmbedder: TestApp;

beforeAll(async () => {
  db = await createTestDatabase();
  withEmbedder = createTestApp({ db, embedder: createConceptEmbedder() });
  withoutEmbedder = createTestApp({ db });
});
afterAll(async () => {
  await Promise.all([withEmbedder.close(), withoutEmbedder.close()]);
  await db.drop();
});

const fact = (body: string) => ({ kind: "fact", origin: "stated", body }) as const;
const memoryIds = (result: Awaited<ReturnType<typeof recall>>) =>
  (result.structured?.memories as { memory_id: string }[] | undefined)?.map((m) => m.memory_id);

describe("hybrid recall", () => {
  it("fuses what the words find with what the meaning finds, and says semantic", async () => {
    const { member } = await createWorkspace(db.owner.db);
    // Stored while no embedder ran: only the words can find it.
    const template = await remember(
      await withoutEmbedder.connect(member),
      fact("Termination letter template is in the precedent bank."),
    );
    const client = await withEmbedder.connect(member);
    // Shares no word with the query: only the meaning can find it.
    const notified = await remember(client, fact("Le licenciement de M. Martin est notifié."));
    const lease = await remember(client, fact("Lease renewal for the Lyon office."));

    const result = await recall(client, { query: "termination" });
    expect(result.structured?.mode).toBe("semantic");
    const ids = memoryIds(result) ?? [];
    // Each is first of its own list, so they tie; the lease is only second of the vector list.
    expect(ids.slice(0, 2).sort()).toEqual(
      [template.structured?.memory_id, notified.structured?.memory_id].sort(),
    );
    expect(ids.indexOf(lease.structured?.memory_id as string)).toBe(2);
  });

  it(`compares only the newest ${VECTOR_CANDIDATES} vectors, plus whatever shares a word`, async () => {
    const { member } = await createWorkspace(db.owner.db);
    const client = await withEmbedder.connect(member);
    const byWord = await remember(client, fact("Termination clause checked for Acme."));
    const byMeaning = await remember(client, fact("Le licenciement de Mme Petit est notifié."));
    for (let i = 0; i < VECTOR_CANDIDATES; i++) {
      await remember(client, fact(`Office note ${i} about the Lyon premises.`));
    }
    const ids = memoryIds(await recall(client, { query: "termination", limit: 20 })) ?? [];
    // Older than the newest vectors, found through its word; the synonym alone is past the cap.
    expect(ids).toContain(byWord.structured?.memory_id);
    expect(ids).not.toContain(byMeaning.structured?.memory_id);
  });
});

/** How often recall's two indexes have been scanned so far (flushed statistics, fresh snapshot). */
async function indexScans(): Promise<Record<string, number>> {
  await db.owner.client`select pg_stat_clear_snapshot()`;
  const rows = await db.owner.client<{ name: string; scans: string }[]>`
    select indexrelname as name, idx_scan as scans from pg_stat_user_indexes
    where indexrelname in ('memories_tenant_search', 'memories_newest')`;
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.scans)]));
}

describe("full-text recall under row-level security", () => {
  /**
   * Index use, read from PostgreSQL's own counters: a rare word must be looked up in the GIN
   * index, and newest-first must walk `memories_newest`, on the app role as the tools run it.
   * Before decision 021, RLS kept the app role off the GIN index (the text match is not
   * leakproof) and the DESC NULLS LAST index could not serve `ORDER BY created_at DESC`, so both
   * scanned the organisation's every memory.
   */
  it("finds a rare word through the GIN index and the newest through memories_newest", async () => {
    const { member } = await createWorkspace(db.owner.db);
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, created_at)
      select ${member.organizationId}, ${member.userId}, 'fact', 'stated',
             'Routine note ' || g || ' about matter ' || (g % 100) || (case when g = 7 then ' zygomorphic' else '' end),
             'seed', now() + interval '90 days', now() - make_interval(secs => g)
      from generate_series(1, 20000) g`;
    // As autovacuum leaves it: the GIN index's pending list merged, the statistics fresh.
    await db.owner.client`vacuum analyze memories`;
    // One connection, so the statistics flushed are the recall's own.
    const app = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      const recallAs = async (query?: string) => {
        const found = await withTenant(app.db, member, (tx) =>
          recallMemories(tx, { organizationId: member.organizationId, query, limit: 5 }),
        );
        await app.client`select pg_stat_force_next_flush()`;
        return found;
      };
      const before = await indexScans();
      const rare = await recallAs("zygomorphic");
      expect(rare.memories.map((m) => m.body)).toEqual([
        "Routine note 7 about matter 7 zygomorphic",
      ]);
      const afterRare = await indexScans();
      expect(afterRare.memories_tenant_search).toBeGreaterThan(before.memories_tenant_search ?? 0);
      const newest = await recallAs();
      expect(newest.mode).toBe("recency");
      expect(newest.memories[0]?.body).toBe("Routine note 1 about matter 1");
      expect((await indexScans()).memories_newest).toBeGreaterThan(afterRare.memories_newest ?? 0);
    } finally {
      await app.close();
    }
  });

  /**
   * Decision 027: each lexeme carries its organisation's tag, so the GIN index's posting list
   * for a word holds one organisation's matches. With the index led by organization_id instead
   * (btree_gin, decision 021), a lookup read and intersected the organisation's every entry, a
   * cost that grew with the organisation; with an untagged index it read every organisation's
   * matches of the word.
   */
  it("looks a word up among its own organisation's index entries only", async () => {
    const crowded = await createWorkspace(db.owner.db);
    const quiet = await createWorkspace(db.owner.db);
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      select ${crowded.member.organizationId}, ${crowded.member.userId}, 'fact', 'stated',
             'Escrow note ' || g || ' about the quillwort clause', 'seed', now() + interval '90 days'
      from generate_series(1, 3000) g`;
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at)
      values (${quiet.member.organizationId}, ${quiet.member.userId}, 'fact', 'stated',
              'The quillwort clause was struck', 'seed', now() + interval '90 days')`;
    await db.owner.client`vacuum analyze memories`;
    const plan = async (organizationId: string) => {
      const [row] = await db.owner.client<{ "QUERY PLAN": unknown }[]>`
        explain (analyze, format json)
        select id from memories
        where search @@ public.north_search_query('en', 'quillwort', true, public.north_tenant_prefix(${organizationId}))`;
      return JSON.stringify(row?.["QUERY PLAN"]);
    };
    const indexRows = (json: string) =>
      Number(/"Index Name":"memories_tenant_search".*?"Actual Rows":([\d.]+)/.exec(json)?.[1]);
    const quietPlan = await plan(quiet.member.organizationId);
    expect(quietPlan).toContain("memories_tenant_search");
    expect(indexRows(quietPlan)).toBe(1);
    // And the tool finds the quiet organisation's one memory, not the crowded one's.
    const found = await withTenant(db.app.db, quiet.member, (tx) =>
      recallMemories(tx, {
        organizationId: quiet.member.organizationId,
        query: "quillwort",
        limit: 5,
      }),
    );
    expect(found.memories.map((m) => m.body)).toEqual(["The quillwort clause was struck"]);
  });

  /**
   * Decision 039: a matter's memories carry the matter's tag, not the organisation's. A word
   * that only one matter's memories hold (the client's name, the matter's own jargon) is common
   * in the table yet absent firm-wide; with one tag for both, the planner read its frequency off
   * the whole organisation, walked memories_newest looking for firm-wide matches that were not
   * there, and read every memory of the organisation (a million: seconds, past the timeout).
   */
  it("looks up a word only a matter's memories hold in the index, firm-wide and in the matter", async () => {
    const { member } = await createWorkspace(db.owner.db);
    const [matter] = await db.owner.client<{ id: string }[]>`
      insert into matters (organization_id, reference, name, access)
      values (${member.organizationId}, 'QUORUM-1', 'Quorum dispute', 'open') returning id`;
    // 20,000 firm-wide memories, newest; 4,000 of the matter, older, every one naming its word.
    await db.owner.client`
      insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at, created_at, matter_id)
      select ${member.organizationId}, ${member.userId}, 'fact', 'stated',
             case when g <= 20000 then 'Routine note ' || g || ' about filings'
                  else 'Matter note ' || g || ' about the quorum' end,
             'seed', now() + interval '90 days', now() - make_interval(secs => g),
             case when g > 20000 then ${matter?.id ?? ""}::uuid end
      from generate_series(1, 24000) g`;
    await db.owner.client`vacuum analyze memories`;
    const app = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      const recallAs = async (matterId?: string) => {
        const found = await withTenant(app.db, member, (tx) =>
          recallMemories(tx, {
            organizationId: member.organizationId,
            query: "quorum",
            matterId,
            limit: 5,
          }),
        );
        await app.client`select pg_stat_force_next_flush()`;
        return found;
      };
      const before = await indexScans();
      const firmWide = await recallAs();
      expect(firmWide.memories).toEqual([]);
      const afterFirmWide = await indexScans();
      expect(afterFirmWide.memories_tenant_search).toBeGreaterThan(
        before.memories_tenant_search ?? 0,
      );
      expect(afterFirmWide.memories_newest).toBe(before.memories_newest);
      // Named, the matter's memories come, newest first among equal ranks.
      const inMatter = await recallAs(matter?.id);
      expect(inMatter.memories.map((m) => m.body)).toEqual(
        [20001, 20002, 20003, 20004, 20005].map((g) => `Matter note ${g} about the quorum`),
      );
      expect(inMatter.memories.every((m) => m.matterId === matter?.id)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
