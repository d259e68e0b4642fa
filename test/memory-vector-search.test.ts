import { createHash, randomBytes } from "node:crypto";
import {
  connectDatabase,
  ensureVectorIndex,
  migrateDatabase,
  recallMemories,
  VECTOR_CANDIDATES,
  VECTOR_INDEX_INLINE_LIMIT,
  withTenant,
} from "@north/db";
import { unitVector } from "@north/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./support/database.ts";
import { createWorkspace, type Workspace } from "./support/fixtures.ts";

/**
 * Decision 028: pgvector with an HNSW index where the server has it, detected at migrate time;
 * the bounded comparison of decision 021 where it has not. Every test asserts the path the
 * server it runs on offers: `bun run test` runs them on the embedded PostgreSQL, which has no
 * pgvector, and `.ci/run` runs them again on a PostgreSQL 17 that has it
 * (scripts/pgvector-postgres.sh), so both paths are proven in every CI run.
 */

let db: TestDatabase;
/** Whether this server offers pgvector (what `north migrate` looks at). */
let pgvector: boolean;

beforeAll(async () => {
  db = await createTestDatabase();
  const [offered] = await db.owner.client`
    select 1 from pg_available_extensions where name = 'vector'`;
  pgvector = offered !== undefined;
});
afterAll(async () => {
  await db.drop();
});

/** Four dimensions: termination, lease, deadline, anything else. Stored as unit vectors. */
const TERMINATION = unitVector([1, 0, 0, 0.05]);
const OFFICE = unitVector([0, 0.1, 0, 1]);
/** The i-th of many different office notes (an HNSW graph of thousands of equal points is not one). */
const office = (i: number) => unitVector([0, 0.1 + (i % 17) / 40, (i % 29) / 60, 1]);

/**
 * Memories of one model, oldest first, a second apart, the newest `agoSeconds` old, with their
 * vectors; returns their ids in that order.
 */
async function seed(
  workspace: Workspace,
  model: string,
  rows: Array<{ body: string; vector: number[] }>,
  agoSeconds = 0,
): Promise<string[]> {
  const { member } = workspace;
  const inserted = await db.owner.client<{ id: string }[]>`
    insert into memories (organization_id, author_id, kind, origin, body, run_id, expires_at,
                          created_at, embedding, embedding_model)
    select ${member.organizationId}, ${member.userId}, 'fact', 'stated', r.body, 'seed',
           now() + interval '90 days', now() - make_interval(secs => ${agoSeconds}::int + ${rows.length}::int - r.n),
           r.vector::real[], ${model}
    from jsonb_to_recordset(${JSON.stringify(
      rows.map((r, n) => ({ n, body: r.body, vector: `{${r.vector.join(",")}}` })),
    )}::jsonb) as r(n int, body text, vector text)
    order by r.n
    returning id`;
  return inserted.map((r) => r.id);
}

/** An old memory only the meaning finds, under `newer` newer ones about something else. */
async function seedPastTheCap(workspace: Workspace, model: string, newer: number) {
  const [old] = await seed(
    workspace,
    model,
    [{ body: "Le licenciement de Mme Petit est notifié.", vector: TERMINATION }],
    86_400,
  );
  await seed(
    workspace,
    model,
    Array.from({ length: newer }, (_, i) => ({ body: `Office note ${i}`, vector: office(i) })),
  );
  return old as string;
}

const recallByMeaning = (workspace: Workspace, model: string, app = db.app) =>
  withTenant(app.db, workspace.member, (tx) =>
    recallMemories(tx, {
      organizationId: workspace.member.organizationId,
      query: "termination",
      limit: 5,
      queryEmbedding: TERMINATION,
      embeddingModel: model,
    }),
  );

/** The name decision 028 gives a model's index, worked out here independently of the product. */
const indexName = (model: string) =>
  `memories_hnsw_${createHash("md5").update(model).digest("hex").slice(0, 16)}`;

const indexState = async (model: string) => {
  const [row] = await db.owner.client<{ valid: boolean | null }[]>`
    select i.indisvalid as valid from pg_index i
    where i.indexrelid = to_regclass(${`public.${indexName(model)}`})`;
  return row?.valid ?? null;
};

describe("pgvector, detected at migrate time", () => {
  it("north migrate reports what the server offers, and creates pgvector where it can", async () => {
    const { vectorSearch } = await migrateDatabase(db.ownerUrl);
    if (pgvector) {
      // The run's template was migrated first, so its clone has the extension already.
      expect(vectorSearch.extension).toBe("installed");
      expect(vectorSearch.version).toMatch(/^0\.(8|9|\d\d)\.|^[1-9]/);
      const [extension] = await db.owner.client`
        select extname from pg_extension where extname = 'vector'`;
      expect(extension).toBeDefined();
    } else {
      expect(vectorSearch).toEqual({ extension: "unavailable", indexes: [] });
    }
  });

  it("tells a migrator that may not create pgvector so, and migrates all the same", async () => {
    const empty = await createTestDatabase({ from: "empty" });
    const role = `north_migrator_${randomBytes(4).toString("hex")}`;
    const password = randomBytes(12).toString("hex");
    try {
      await db.owner.client.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await db.owner.client.unsafe(`ALTER DATABASE ${empty.name} OWNER TO ${role}`);
      const url = new URL(empty.ownerUrl);
      url.username = role;
      url.password = password;
      const { vectorSearch } = await migrateDatabase(url.toString());
      expect(vectorSearch).toEqual({
        extension: pgvector ? "not-permitted" : "unavailable",
        indexes: [],
      });
      const [memoriesTable] = await empty.owner.client`select to_regclass('public.memories') as t`;
      expect(memoriesTable?.t).toBe("memories");
    } finally {
      await empty.drop();
      await db.owner.client.unsafe(`DROP ROLE IF EXISTS ${role}`);
    }
  });
});

describe("the vector list", () => {
  it(`finds by meaning alone a memory older than the newest ${VECTOR_CANDIDATES} once the model has its index`, async () => {
    const workspace = await createWorkspace(db.owner.db);
    const model = `concepts-${randomBytes(3).toString("hex")}@4`;
    const old = await seedPastTheCap(workspace, model, VECTOR_CANDIDATES + 50);

    // Before the index, either server compares the newest vectors only (decision 021).
    expect((await recallByMeaning(workspace, model)).memories.map((m) => m.id)).not.toContain(old);

    // The backfill's call once the provider has answered.
    expect(await ensureVectorIndex(db.maintenance.db, model)).toBe(
      pgvector ? "created" : "unavailable",
    );
    expect(await ensureVectorIndex(db.maintenance.db, model)).toBe(
      pgvector ? "present" : "unavailable",
    );
    expect(await indexState(model)).toBe(pgvector ? true : null);

    const found = await recallByMeaning(workspace, model);
    expect(found.mode).toBe("semantic");
    if (pgvector) expect(found.memories[0]?.id).toBe(old);
    else expect(found.memories.map((m) => m.id)).not.toContain(old);
  });

  it("takes the nearest from the HNSW index itself, on the app role", async () => {
    const workspace = await createWorkspace(db.owner.db);
    const model = `concepts-${randomBytes(3).toString("hex")}@4`;
    const old = await seedPastTheCap(workspace, model, 3000);
    await db.owner.client`analyze memories`;
    // Too many vectors to build inside a transaction: north migrate builds it.
    await migrateDatabase(db.ownerUrl);
    const index = indexName(model);
    const scans = async () => {
      await db.owner.client`select pg_stat_clear_snapshot()`;
      const [row] = await db.owner.client<{ scans: string }[]>`
        select idx_scan as scans from pg_stat_user_indexes where indexrelname = ${index}`;
      return row ? Number(row.scans) : null;
    };
    // One connection, so the statistics flushed are the recall's own.
    const app = connectDatabase(db.directAppUrl, { max: 1 });
    try {
      const before = await scans();
      const found = await recallByMeaning(workspace, model, app);
      await app.client`select pg_stat_force_next_flush()`;
      if (pgvector) {
        expect(found.memories[0]?.id).toBe(old);
        expect(await scans()).toBeGreaterThan(before ?? 0);
      } else {
        expect(before).toBeNull(); // no index, and the bounded list misses the old memory
        expect(found.memories.map((m) => m.id)).not.toContain(old);
      }
    } finally {
      await app.close();
    }
  });

  it("never lists another organisation's memory, however near", async () => {
    const mine = await createWorkspace(db.owner.db);
    const theirs = await createWorkspace(db.owner.db);
    const model = `concepts-${randomBytes(3).toString("hex")}@4`;
    const [far] = await seed(mine, model, [{ body: "Office move", vector: OFFICE }]);
    const near = await seed(
      theirs,
      model,
      Array.from({ length: 100 }, (_, i) => ({ body: `Termination ${i}`, vector: TERMINATION })),
    );
    await ensureVectorIndex(db.maintenance.db, model);
    const ids = await withTenant(db.app.db, mine.member, async (tx) => {
      const [row] = await tx.execute<{ ids: string[] | null }>(
        // The full-text candidates (p_also) too may name only this organisation's memories.
        `select to_json(public.memory_vector_candidates('{${TERMINATION.join(",")}}'::real[], '${model}', null, null, '{${near.slice(0, 3).join(",")}}'::uuid[], 50, 200, null)) as ids`,
      );
      return row?.ids;
    });
    // Null without pgvector: no index, so the caller compares vectors itself, under RLS.
    expect(ids).toEqual(pgvector ? [far] : null);
  });
});

describe("building an index", () => {
  it(`leaves a model with over ${VECTOR_INDEX_INLINE_LIMIT} vectors to north migrate, which builds it concurrently`, async () => {
    const workspace = await createWorkspace(db.owner.db);
    const model = `concepts-${randomBytes(3).toString("hex")}@4`;
    await seedPastTheCap(workspace, model, VECTOR_INDEX_INLINE_LIMIT);
    expect(await ensureVectorIndex(db.maintenance.db, model)).toBe(
      pgvector ? "deferred" : "unavailable",
    );
    expect(await indexState(model)).toBeNull();

    const { vectorSearch } = await migrateDatabase(db.ownerUrl);
    if (pgvector) {
      expect(vectorSearch.indexes).toContainEqual({
        model,
        index: expect.stringMatching(/^memories_hnsw_[0-9a-f]{16}$/),
        outcome: "created",
      });
      expect(await indexState(model)).toBe(true);
      expect(await ensureVectorIndex(db.maintenance.db, model)).toBe("present");
    } else {
      expect(vectorSearch.indexes).toEqual([]);
    }
  });

  it("rebuilds an index an interrupted build left invalid", async () => {
    const workspace = await createWorkspace(db.owner.db);
    const model = `concepts-${randomBytes(3).toString("hex")}@4`;
    const old = await seedPastTheCap(workspace, model, VECTOR_CANDIDATES);
    const built = await ensureVectorIndex(db.maintenance.db, model);
    if (!pgvector) {
      expect(built).toBe("unavailable");
      return;
    }
    // What a CREATE INDEX CONCURRENTLY cancelled half-way leaves behind.
    await db.owner.client`
      update pg_index set indisvalid = false
      where indexrelid = to_regclass(${`public.${indexName(model)}`})`;
    expect(await ensureVectorIndex(db.maintenance.db, model)).toBe("invalid");
    // An invalid index is not used: recall falls back to the bounded comparison.
    expect((await recallByMeaning(workspace, model)).memories.map((m) => m.id)).not.toContain(old);

    const { vectorSearch } = await migrateDatabase(db.ownerUrl);
    expect(vectorSearch.indexes).toContainEqual(
      expect.objectContaining({ model, outcome: "created" }),
    );
    expect(await indexState(model)).toBe(true);
    expect((await recallByMeaning(workspace, model)).memories[0]?.id).toBe(old);
  });

  it("gives a model of over 2,000 dimensions a halfvec index, and one of over 4,000 none", async () => {
    if (!pgvector) {
      expect(await ensureVectorIndex(db.maintenance.db, "wide@3072")).toBe("unavailable");
      return;
    }
    expect(await ensureVectorIndex(db.maintenance.db, "wide@3072")).toBe("created");
    const [definition] = await db.owner.client<{ def: string }[]>`
      select pg_get_indexdef(to_regclass(${`public.${indexName("wide@3072")}`})) as def`;
    expect(definition?.def).toContain("halfvec(3072)");
    expect(await ensureVectorIndex(db.maintenance.db, "huge@8192")).toBe("too-large");
  });
});
